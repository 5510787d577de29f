/**
 * `hosted-sms-verify-kit audit` takes `--only=IDS` as it takes `--config=FILE` (and as the kit's other
 * commands take their flags): it refused the spelling as an unknown argument. Written either way, an
 * unknown check id is named and an empty list is refused, before any configuration is loaded.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runCli } from '../../cli/dispatch.ts';
import { fileURLToPath } from 'node:url';

const sample = fileURLToPath(new URL('./sample.config.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'audit-only-equals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const unloadable = join(dir, 'unloadable.config.mjs');
writeFileSync(unloadable, `export default () => { throw new Error('the configuration was loaded'); };\n`);

async function audit(argv: string[]): Promise<{ code: number; printed: string }> {
  let printed = '';
  const print = (text: string) => void (printed += text);
  const code = await runCli(['audit', ...argv], {}, { write: print, warn: print });
  return { code, printed };
}

it('--only=IDS names its checks as --only IDS does: an unknown id is named, not the flag', async () => {
  for (const argv of [
    ['--config', sample, '--only=no.such-check'],
    ['--config', sample, '--only', 'no.such-check'],
  ]) {
    const { code, printed } = await audit(argv);
    expect(code, argv.join(' ')).toBe(1);
    expect(printed, argv.join(' ')).toContain('unknown check id(s)');
    expect(printed, argv.join(' ')).not.toContain('unknown argument');
  }
}, 60_000);

it('an unknown check id is refused before the configuration is loaded (it may start and seed things), naming the id it likely meant', async () => {
  for (const argv of [
    ['--config', unloadable, '--only=leak.secert'],
    ['--config', unloadable, '--only', 'leak.secret,no.such-check'],
  ]) {
    const { code, printed } = await audit(argv);
    expect(code, argv.join(' ')).toBe(1);
    expect(printed, argv.join(' ')).toContain('unknown check id(s) in --only');
    expect(printed).not.toContain('the configuration was loaded');
  }
  expect((await audit(['--config', unloadable, '--only=leak.secert'])).printed).toContain(
    '(did you mean leak.secret?)',
  );
});

it('--only= with no id is refused before the configuration is loaded, as --only with an empty value is', async () => {
  for (const argv of [
    ['--config', unloadable, '--only='],
    ['--config', unloadable, '--only=,'],
  ]) {
    const { code, printed } = await audit(argv);
    expect(code, argv.join(' ')).toBe(1);
    expect(printed, argv.join(' ')).toContain('--only names no check');
    expect(printed).not.toContain('the configuration was loaded');
  }
});
