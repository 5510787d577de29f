/**
 * The audit command stopped while its configuration is still loading (Ctrl-C, or SIGTERM from a
 * cancelled CI job, as the configuration starts the app in another process): it says so at once,
 * waits for the configuration, runs its close() (which stops that process) and exits 130 or 143; no
 * report, no stack. Runs the bin as built: needs `npm run build`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');

let dir: string;
const started: number[] = [];

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-audit-stopped-loading-'));
  // Starts "the app" in another process, then takes 0.6 s to be ready (real time, in the audit's own
  // process: long enough for the signal sent at "starting" to land first on a loaded machine); close() stops it.
  writeFileSync(
    join(dir, 'slow.config.mjs'),
    `import { spawn } from 'node:child_process';
     import { writeFileSync } from 'node:fs';
     export default async (env) => {
       const app = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
       writeFileSync(env.PID_FILE, String(app.pid));
       process.stderr.write('starting\\n');
       await new Promise((resolve) => setTimeout(resolve, 600));
       const url = 'http://127.0.0.1:9';
       return {
         appUrl: url, emulatorUrl: url, serviceUrl: url,
         clientId: 'audit-client', clientSecret: 'stopped-loading-secret-0123456789',
         signIn: { path: '/login', fields: (user) => ({ user }) },
         actions: [{ name: 'confirm_phone' }],
         close() { app.kill(); process.stderr.write('closed what it started\\n'); },
       };
     };\n`,
  );
});
afterAll(() => {
  for (const pid of started) if (isRunning(pid)) process.kill(pid);
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the audit and sends `signal` once the configuration says it is starting the app. */
function stoppedBy(
  signal: NodeJS.Signals,
): Promise<{ code: number | null; stdout: string; stderr: string; pid: number }> {
  const pidFile = join(dir, `${signal}.pid`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, 'audit', '--config', 'slow.config.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', PID_FILE: pidFile },
    });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!sent && stderr.includes('starting\n')) {
        sent = true;
        child.kill(signal);
      }
    });
    child.on('close', (code) => {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      started.push(pid);
      resolve({ code, stdout, stderr, pid });
    });
  });
}

describe.concurrent('hosted-sms-verify-kit audit stopped while its configuration loads', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s: said at once, the configuration closed once loaded (its app process stopped), exit %i, no report',
    async (signal, code) => {
      const run = await stoppedBy(signal);
      expect(run.code).toBe(code);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        'starting\n' +
          `the audit was stopped (${signal}) while your configuration loaded: no report; closing what it started once it has loaded (again to end at once)\n` +
          'closed what it started\n',
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(isRunning(run.pid)).toBe(false);
    },
    30_000,
  );
});
