/**
 * The audit command (`hosted-sms-verify-kit audit --config FILE`): loads the configuration module,
 * prints the table or the JSON report, and says by its exit code whether every check passed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// The command as the bin runs it: from the build.
import { command } from '../../dist/testing/audit/command.js';

const config = fileURLToPath(new URL('./sample.config.ts', import.meta.url));
const ONLY = 'redirect.landing,forged.wrong-state,leak.secret';

async function run(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await command.run(
    argv,
    env,
    (text) => (out += text),
    (text) => (err += text),
  );
  return { code, out, err };
}

describe('hosted-sms-verify-kit audit', () => {
  it('a sound app: exit 0 and a table with one passing line per check run', async () => {
    const { code, out } = await run(['--config', config, '--only', ONLY]);
    expect(code).toBe(0);
    for (const id of ONLY.split(',')) expect(out).toMatch(new RegExp(`^${id.replace('.', '\\.')}\\s+pass\\s`, 'm'));
    expect(out).toContain('3 passed, 0 failed');
  }, 60_000);

  it('a flawed app with --json: exit 2 and a JSON report naming the failed check, its evidence and fix', async () => {
    const { code, out } = await run(['--config', config, '--only', ONLY, '--json'], { AUDIT_FLAW: 'nextRedirect' });
    expect(code).toBe(2);
    const report = JSON.parse(out) as {
      ok: boolean;
      checks: { id: string; status: string; evidence: string[]; fix: string }[];
    };
    expect(report.ok).toBe(false);
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ['forged.wrong-state', 'pass'],
      ['redirect.landing', 'fail'],
      ['leak.secret', 'pass'],
    ]);
    const failed = report.checks[1]!;
    expect(failed.evidence.join('\n')).toContain('evil.example');
    expect(failed.fix).toMatch(/^Never redirect/);
  }, 60_000);

  it("--json with a close() that fails: the standard output is the JSON report alone, the close's failure said on standard error (exit 2)", async () => {
    const { code, out, err } = await run(['--config', config, '--only', 'forged.wrong-state', '--json'], {
      AUDIT_CLOSE_FAILS: 'the test database was already closed',
    });
    expect(code).toBe(2);
    expect((JSON.parse(out) as { ok: boolean }).ok).toBe(true);
    expect(err).toBe('your close() failed: the test database was already closed\n');
  }, 60_000);

  it('an audit that stopped before its checks (no emulator answers): exit 1, its reason in the report, as a configuration mistake', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-audit-stopped-'));
    try {
      writeFileSync(
        join(dir, 'no-emulator.config.mjs'),
        `export default {
           appUrl: 'http://127.0.0.1:1', emulatorUrl: 'http://127.0.0.1:1', serviceUrl: 'http://127.0.0.1:1',
           clientId: 'audit-client', clientSecret: 'no-emulator-secret-0123',
           signIn: { path: '/login', fields: (user) => ({ user }) },
           actions: [{ name: 'confirm_phone' }],
           probe: () => 0,
         };\n`,
      );
      const { code, out } = await run(['--config', join(dir, 'no-emulator.config.mjs'), '--json']);
      expect(code).toBe(1);
      expect((JSON.parse(out) as { stopped?: string }).stopped).toMatch(
        /control API at http:\/\/127\.0\.0\.1:1 did not answer/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('usage mistakes are refused before anything runs', async () => {
    await expect(run([])).rejects.toThrow('--config FILE is required.');
    await expect(run(['--config', 'nowhere.js'])).rejects.toThrow('no such file');
    await expect(run(['--config', config, '--only', 'no.such-check'])).rejects.toThrow('unknown check id(s)');
  }, 60_000);

  it('an --only naming no check (an empty variable in CI) is a usage mistake, never an audit of nothing that passes', async () => {
    for (const only of ['', ',', ' , ']) {
      await expect(run(['--config', config, '--only', only])).rejects.toThrow(
        '--only names no check: give check ids (comma-separated), or leave --only out to run every check.',
      );
    }
    await expect(run(['--config', config, '--only'])).rejects.toThrow('--only names no check');
  }, 60_000);
});
