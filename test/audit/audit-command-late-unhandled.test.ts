/**
 * The audit command against a configuration whose close() leaves a promise that rejects after the
 * report is printed (a query of a pool it just ended): the error is said on standard error as one
 * line, without the client secret and without a stack, and the command exits 2 as for any error of
 * your code nothing handled, never with Node's crash. Runs the bin as built (needs `npm run build`),
 * with tsx for the TypeScript configuration.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const CONFIG = fileURLToPath(new URL('./late-unhandled.config.ts', import.meta.url));

function audit(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, 'audit', '--config', CONFIG, '--only', 'redirect.landing'],
      { env: { PATH: process.env.PATH ?? '' }, timeout: 90_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

describe('hosted-sms-verify-kit audit, a rejection nobody handles after the report', () => {
  it('said in one line, no secret, no stack; exit 2', async () => {
    const run = await audit();
    expect(run.stdout).toMatch(/^redirect\.landing\s+pass\s/m);
    expect(run.stderr).toMatch(
      /^your code rejected, and nothing handled it \(in production this ends your app\): pool for client \[client secret\] has ended$/m,
    );
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.code).toBe(2);
  }, 120_000);
});
