/**
 * The audit command against an app (in its process) whose own code throws or rejects where nothing
 * handles it, as the audit's forged requests reach it: each error is said on standard error as one
 * line, without the client secret in any spelling and without a stack (not even one its message
 * quotes); the audit goes on to print its report, closes what the configuration started, and exits
 * 2 (in production each would end the app). Runs the bin as built (needs `npm run build`), with
 * tsx for the TypeScript configuration.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const CONFIG = fileURLToPath(new URL('./unhandled.config.ts', import.meta.url));

function audit(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, 'audit', '--config', CONFIG, '--only', 'redirect.landing,forged.wrong-state'],
      { env: { PATH: process.env.PATH ?? '' }, timeout: 90_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

describe('hosted-sms-verify-kit audit, an app whose code throws and rejects unhandled', () => {
  it('each said in one line, no secret, no stack; the report printed and the audit failed (exit 2)', async () => {
    const run = await audit();
    expect(run.stdout).toMatch(/^redirect\.landing\s+pass\s/m);
    expect(run.stdout).toContain('2 passed, 0 failed');
    expect(run.stderr).toMatch(
      /^your code rejected, and nothing handled it \(in production this ends your app\): could not remember https:\/\/evil\.example\/audit for client \[client secret\]$/m,
    );
    expect(run.stderr).toMatch(
      /^your code threw, and nothing handled it \(in production this ends your app\): TypeError: bad next for \[client secret\]$/m,
    );
    expect(run.stderr).toMatch(
      /^\d+ error\(s\) of your code went unhandled while the audit ran \(said above\): a failed audit$/m,
    );
    expect(run.stderr).toMatch(
      /^your code rejected, and nothing handled it \(in production this ends your app\): could not keep next Error: session store closed$/m,
    );
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr).not.toContain('sample-');
    expect(run.code).toBe(2);
  }, 120_000);
});
