/**
 * `hosted-sms-verify-kit audit` refuses `--config` or `--only` given twice (exit 1, naming the flag)
 * and loads no configuration, as the kit's other commands do: it kept the last one silently, so the
 * configuration the operator named first was never loaded, and nothing said so.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runCli } from '../../cli/dispatch.ts';

const dir = mkdtempSync(join(tmpdir(), 'audit-twice-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
for (const name of ['first', 'second']) {
  writeFileSync(
    join(dir, `${name}.config.mjs`),
    `export default () => { throw new Error('the ${name} configuration was loaded'); };\n`,
  );
}

async function audit(argv: string[]): Promise<{ code: number; printed: string }> {
  let printed = '';
  const print = (text: string) => void (printed += text);
  const code = await runCli(['audit', ...argv], {}, { write: print, warn: print });
  return { code, printed };
}

it('--config given twice is refused (exit 1, naming it), loading neither configuration', async () => {
  const first = join(dir, 'first.config.mjs');
  const second = join(dir, 'second.config.mjs');
  for (const argv of [
    ['--config', first, '--config', second],
    [`--config=${first}`, '--config', second],
    ['--config', first, '--only', 'a', '--only', 'b'],
  ]) {
    const { code, printed } = await audit(argv);
    expect(code, argv.join(' ')).toBe(1);
    const flag = argv.includes('--only') ? '--only' : '--config';
    expect(printed.split('\n')[0], `${argv.join(' ')} printed: ${printed.split('\n')[0]}`).toContain(
      `${flag} given twice: give it once.`,
    );
  }
});
