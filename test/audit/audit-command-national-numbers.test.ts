/**
 * The audit command against an app (in its process) whose own code rejects unhandled with the
 * signed-in user's own number in national form in its message ("(555) 012-3456": no `+`, a number
 * the audit never typed): the error is said on standard error with the number masked, never in full. Runs the bin as built
 * (needs `npm run build`), with tsx for the TypeScript configuration.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const CONFIG = fileURLToPath(new URL('./national-number-unhandled.config.ts', import.meta.url));

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

describe("hosted-sms-verify-kit audit, an app whose unhandled error quotes the user's own number in national form", () => {
  it('says the error with the number masked, never in full, and fails the audit (exit 2)', async () => {
    const run = await audit();
    expect(run.stderr).toMatch(
      /^your code rejected, and nothing handled it \(in production this ends your app\): could not text \(\[a number ending \d\d\] yet$/m,
    );
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/\(555\) \d{3}-\d{4}/);
    expect(run.code).toBe(2);
  }, 120_000);
});
