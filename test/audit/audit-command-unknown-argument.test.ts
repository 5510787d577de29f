/**
 * The audit command reads its arguments before any configuration tells it the client secret, so an
 * argument it does not take is named without repeating a value that may be the secret (pasted
 * after `--client-secret=`, or alone) or a phone number: exit 1, the option's name alone. An
 * unknown flag with no value is still named, so the person sees what to fix. Runs the bin as
 * built: needs `npm run build` (npm test builds dist/ first).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const SECRET = `sk_live_${randomBytes(16).toString('hex')}`;

function run(argv: string[]): Promise<{ code: number | null; output: string }> {
  // As a person runs it with the secret pasted on the command line, not in the environment.
  const env = { PATH: process.env.PATH ?? '' };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...argv], { env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? null), output: `${stdout}${stderr}` }),
    );
  });
}

describe('audit: an argument it does not take', () => {
  it.each([
    ['--client-secret=<secret>', `--client-secret=${SECRET}`],
    ['the secret without its flag', SECRET],
    ['a phone number without its flag', '+447400123456'],
  ])('%s: refused (exit 1) without repeating it', async (_what, arg) => {
    const { code, output } = await run(['audit', '--config', './audit.config.mjs', arg]);
    expect(code).toBe(1);
    expect(output).toMatch(/unknown argument/);
    expect(output).not.toContain(SECRET.slice(8, 20));
    expect(output).not.toContain('7400123456');
  });

  it('a flag it does not take is named', async () => {
    const { code, output } = await run(['audit', '--config', './audit.config.mjs', '--verbose']);
    expect(code).toBe(1);
    expect(output).toContain('unknown argument "--verbose"');
  });
});
