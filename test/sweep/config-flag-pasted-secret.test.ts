/**
 * A client secret pasted where `--config` takes a file name is never repeated by the CLI (sweep,
 * fraud, audit): the flags are read before any configuration tells a command a secret to hide, so
 * the value is quoted back only when written as a module's file name. It was quoted twice ("--config
 * <secret>: no such file (looked at <cwd>/<secret>)"), in the sweep job's log line or on stderr.
 * Runs the bin as built (dist/).
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const SECRET = 'sk_live_Qm3Zt8Lw2Rx9Vb4N';

function run(argv: string[]): Promise<{ code: number | null; output: string }> {
  // As a person runs it with the secret pasted on the command line, not in the environment.
  const env = { PATH: process.env.PATH ?? '' };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...argv], { env, cwd: tmpdir(), timeout: 15_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? null), output: `${stdout}${stderr}` }),
    );
  });
}

it.each([
  [['sweep', '--once', '--config', SECRET]],
  [['sweep', '--once', `--config=${SECRET}`]],
  [['fraud', 'rules', '--config', SECRET]],
  [['audit', '--config', SECRET]],
])('%j: exit 1, the secret not repeated', async (argv) => {
  const { code, output } = await run(argv);
  expect(code).toBe(1);
  const line = output.split('\n')[0] ?? '';
  expect(line.includes(SECRET.slice(0, 8)) || line.includes(SECRET.slice(-8)), `printed: ${line}`).toBe(false);
});
