/**
 * `hosted-sms-verify-kit audit --json` as CI parses it, against an app (in the command's process)
 * that logs every request on standard output: standard output holds the JSON report alone, and what
 * the app or the configuration wrote there goes to standard error. Runs the bin as built (needs
 * `npm run build`), with tsx for the TypeScript configuration.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const CONFIG = fileURLToPath(new URL('./logging.config.ts', import.meta.url));

describe('hosted-sms-verify-kit audit --json, an app that logs on standard output', () => {
  it("standard output is the JSON report alone; the app's lines and the close's go to standard error", async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', MAIN, 'audit', '--config', CONFIG, '--only', 'forged.wrong-state', '--json'],
        { env: { PATH: process.env.PATH ?? '' }, timeout: 90_000 },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
      );
    });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { ok: boolean }).ok).toBe(true);
    expect(run.stderr).toMatch(/^POST \/verify\/start$/m);
    expect(run.stderr).toMatch(/^closing the sample app$/m);
  }, 120_000);
});
