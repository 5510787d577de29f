/**
 * The audit command stopped while it runs (Ctrl-C in a terminal, SIGTERM from a cancelled CI job):
 * it says so on standard error, runs the configuration's close() (which stops what it started in
 * other processes) and exits 130 or 143, as a shell reports a process those signals ended; no
 * report, no stack. Runs the bin as built: needs `npm run build` (npm test builds dist/ first).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-audit-stopped-'));
  // An "emulator" that takes connections and never answers: the audit waits on it, as on a slow app.
  writeFileSync(
    join(dir, 'waits.config.mjs'),
    `import { createServer } from 'node:net';
     import { once } from 'node:events';
     export default async () => {
       const server = createServer(() => {}).listen(0, '127.0.0.1');
       await once(server, 'listening');
       const url = 'http://127.0.0.1:' + server.address().port;
       process.stderr.write('auditing\\n');
       return {
         appUrl: url, emulatorUrl: url, serviceUrl: url,
         clientId: 'audit-client', clientSecret: 'stopped-audit-secret-0123456789',
         signIn: { path: '/login', fields: (user) => ({ user }) },
         actions: [{ name: 'confirm_phone' }],
         probe: () => 0,
         close() { process.stderr.write('closed what it started\\n'); server.close(); },
       };
     };\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the audit and sends `signal` once the configuration says the audit is running. */
function stoppedBy(signal: NodeJS.Signals): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, 'audit', '--config', 'waits.config.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
    });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!sent && stderr.includes('auditing\n')) {
        sent = true;
        // A moment for the audit to be under way (its first call to the emulator).
        setTimeout(() => child.kill(signal), 300);
      }
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.concurrent('hosted-sms-verify-kit audit stopped before it finished', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s: said on standard error, the configuration closed, exit %i, no report, no stack',
    async (signal, code) => {
      const run = await stoppedBy(signal);
      expect(run.code).toBe(code);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        'auditing\n' +
          `the audit was stopped (${signal}) before it finished: no report; closing what your configuration started\n` +
          'closed what it started\n',
      );
    },
    30_000,
  );
});
