/**
 * The audit command reads its configuration module's default export. A module without one
 * (`export const options = {...}`, the options under a name of their own) was read as the options
 * themselves: the command listed eight problems with the options, every one of them given, and
 * asked "did you mean `actions`?" of the name `options`. It now says the module has no default
 * export, naming what it exports, and how to export the options. Runs the command as built: needs
 * `npm run build`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command } from '../../dist/testing/audit/command.js';

const OPTIONS = `{ appUrl: 'http://127.0.0.1:1', emulatorUrl: 'http://127.0.0.1:1', clientId: 'audit-client',
  clientSecret: 'config-exports-audit-secret-7c2e', signIn: () => ({ csrf: 'x' }), actions: [{ name: 'confirm_phone' }],
  probe: () => 0 }`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-audit-config-exports-'));
  writeFileSync(join(dir, 'named.config.mjs'), `export const options = ${OPTIONS};\nexport const close = () => {};\n`);
  writeFileSync(join(dir, 'empty.config.mjs'), `const options = ${OPTIONS};\n`);
  writeFileSync(join(dir, 'default.config.mjs'), `export default ${OPTIONS};\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(file: string): Promise<{ code?: number; error?: Error; err: string }> {
  let err = '';
  try {
    const code = await command.run(
      ['--config', join(dir, file), '--only', 'cookie.flags'],
      {},
      () => {},
      (text) => (err += text),
    );
    return { code, err };
  } catch (error) {
    return { error: error as Error, err };
  }
}

describe('hosted-sms-verify-kit audit, a configuration module without a default export', () => {
  it('exporting the options under a name of their own: refused as a usage mistake naming what it exports', async () => {
    const { error } = await run('named.config.mjs');
    expect(error?.name).toBe('UsageError');
    expect(error?.message).toBe(
      `--config ${join(dir, 'named.config.mjs')} has no default export (it exports options, close): export the audit's options, or a function of env returning them, as default.`,
    );
  });

  it('exporting nothing: refused, saying so', async () => {
    const { error } = await run('empty.config.mjs');
    expect(error?.name).toBe('UsageError');
    expect(error?.message).toContain('has no default export (it exports nothing)');
  });

  it('exporting the options as default: read as the options (the run goes on to the emulator)', async () => {
    const { code, error, err } = await run('default.config.mjs');
    expect(error).toBeUndefined();
    // Nothing answers at 127.0.0.1:1: the audit stopped before its checks, a configuration mistake.
    expect(code).toBe(1);
    expect(err).not.toMatch(/problem\(s\) with the options/);
  });
});
