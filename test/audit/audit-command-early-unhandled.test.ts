/**
 * The audit command against a configuration whose app rejects unhandled while the configuration is
 * still loading, quoting the client secret the configuration read from its own store (not the
 * environment): the line said on standard error never shows the secret. Runs the bin as built
 * (needs `npm run build`), with tsx for the TypeScript configuration.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const CONFIG = fileURLToPath(new URL('./early-unhandled.config.ts', import.meta.url));

describe('hosted-sms-verify-kit audit, a rejection nobody handles while the configuration loads', () => {
  it('said in one line without the secret, the audit run and failed (exit 2)', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', MAIN, 'audit', '--config', CONFIG, '--only', 'redirect.landing'],
        { env: { PATH: process.env.PATH ?? '' }, timeout: 90_000 },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
      );
    });
    expect(run.stdout).toMatch(/^redirect\.landing\s+pass\s/m);
    expect(run.stderr).toMatch(
      /^your code rejected, and nothing handled it \(in production this ends your app\): warm-up failed for client \[client secret\]$/m,
    );
    expect(run.stderr).not.toContain('sample-');
    expect(run.code).toBe(2);
  }, 120_000);
});
