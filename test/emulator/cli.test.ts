/**
 * `npm run emulator` (cli/main.ts emulator, the package's `emulator` command) as a person runs it: it says where it listens,
 * which client is registered and where the inbox is, never prints a client secret, and stops
 * cleanly on SIGTERM. Runs the command as built (dist/cli/main.js, the same code `npm run emulator`
 * loads through tsx): needs `npm run build` (npm test builds dist/ first).
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT } from '../../emulator/config/config.ts';
import { builtFile } from '../support/built.ts';

// Plain node starts the built bin in under half of what loading the TypeScript through tsx takes.
const MAIN = builtFile('cli/main.js');

function runEmulator(env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, [MAIN, 'emulator', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let settle = { resolve: (_banner: string) => {}, reject: (_error: Error) => {} };
  const banner = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  const timer = setTimeout(() => settle.reject(new Error(`no banner within 15 s:\n${output}`)), 15_000);
  child.stdout.on('data', () => {
    if (output.includes('Press Ctrl+C')) settle.resolve(output);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // A run that exits without its banner (a refused configuration) ends its wait, which a test
  // expecting that exit never awaits: no timer or rejection outlives the run.
  child.on('exit', () => settle.reject(new Error(`exited before its banner:\n${output}`)));
  void banner.catch(() => undefined).finally(() => clearTimeout(timer));
  return { child, banner, exited, output: () => output };
}

describe('npm run emulator', () => {
  it('a bad flag is refused (exit 1) naming the flag given, not the environment variable it stands for', async () => {
    const cases: [string[], string][] = [
      [['--port', '99999'], '--port must be an integer from 0 to 65535, got "99999".'],
      [['--control', 'maybe'], '--control must be "on" (default) or "off"'],
      [['--page-host', 'a/b'], '--page-host must be a bare host name such as verify.localhost'],
    ];
    for (const [args, message] of cases) {
      const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [MAIN, 'emulator', ...args],
          { env: { PATH: process.env.PATH ?? '' }, timeout: 15_000 },
          (error, _stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stderr }),
        );
      });
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(`hosted-sms-verify-kit emulator: ${message}`);
    }
  });

  it('says each text it sends with its code and the number masked, never the number in full', async () => {
    const clients = JSON.stringify([
      { clientId: 'cli-client', secret: 'cli-secret-0123456789', returnUrl: 'http://localhost:3999/verify/return' },
    ]);
    const run = runEmulator({ EMULATOR_PORT: '0', EMULATOR_CLIENTS: clients, EMULATOR_CONTROL: 'off' });
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(await run.banner)?.[1];
    const created = await fetch(`${url}/session`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from('cli-client:cli-secret-0123456789').toString('base64')}`,
      },
      body: JSON.stringify({
        returnUrl: 'http://localhost:3999/verify/return',
        channel: 'sms',
        destination: '+447400123456',
        operationSensitivity: 'normal',
        userRef: 'u1',
        state: 's1',
      }),
    });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const deadline = Date.now() + 5_000;
    while (!run.output().includes(sessionId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    run.child.kill('SIGTERM');
    await run.exited;
    const line = run
      .output()
      .split('\n')
      .find((l) => l.includes(sessionId));
    expect(line).toMatch(/^SMS to ••\u00a056: your code is \d{6} \(session ses_/);
    expect(run.output()).not.toMatch(/7400\s?123\s?456/);
  });

  it('prints its URL, the registered client and the inbox, never the client secret, and exits 0 on SIGTERM', async () => {
    const secret = `cli-secret-${randomBytes(8).toString('hex')}`;
    const clients = JSON.stringify([
      { clientId: 'cli-client', secret, returnUrl: 'http://localhost:3999/verify/return' },
    ]);
    const run = runEmulator({ EMULATOR_PORT: '0', EMULATOR_CLIENTS: clients });
    const banner = await run.banner;
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
    expect(url).toBeDefined();
    expect(banner).toContain('client cli-client');
    expect(banner).toContain('http://localhost:3999/verify/return');
    expect(banner).toContain(`${url}/_dev/inbox`);
    // The emulator really answers at the printed URL with the configured client.
    const created = await fetch(`${url}/session`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`cli-client:${secret}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        returnUrl: 'http://localhost:3999/verify/return',
        channel: 'sms',
        destination: '+15550100001',
        operationSensitivity: 'normal',
        userRef: 'u1',
        state: 's1',
      }),
    });
    expect(created.status).toBe(200);
    // The hosted page is served under verify.localhost on the same port (passkeys need a host name).
    const port = new URL(url!).port;
    expect(banner).toContain(`verifyUrl http://verify.localhost:${port}/verify`);
    expect(((await created.json()) as { verifyUrl: string }).verifyUrl).toBe(`http://verify.localhost:${port}/verify`);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.output()).not.toContain(secret);
    expect(run.output()).toMatch(/SMS to ••\u00a001: your code is \d{6}/);
  });

  it('with the built-in test client, prints its .env lines to paste but its secret, and says where that is', async () => {
    const run = runEmulator({ EMULATOR_PORT: '0' });
    const banner = await run.banner;
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
    expect(url).toBeDefined();
    const lines = banner.split('\n').map((line) => line.trim());
    expect(lines).toEqual(
      expect.arrayContaining([
        `VERIFY_BASE_URL=${url}`,
        'VERIFY_CLIENT_ID=demo-client',
        'VERIFY_RETURN_URL=http://localhost:3000/verify/return',
      ]),
    );
    expect(banner).toContain("set VERIFY_CLIENT_SECRET to the built-in test client's, in the kit's emulator/README.md");
    // The README section the banner names holds the secret, so the lines pasted work.
    const readme = readFileSync(new URL('../../emulator/README.md', import.meta.url), 'utf8');
    expect(readme).toContain('### The built-in test client');
    expect(readme).toContain(`| \`VERIFY_CLIENT_SECRET\` | \`${DEFAULT_CLIENT.secret}\` |`);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    // No secret in the command's output, the public one neither (nor its Basic token's spelling).
    expect(run.output()).not.toContain(DEFAULT_CLIENT.secret);
    expect(run.output()).not.toContain(Buffer.from(`demo-client:${DEFAULT_CLIENT.secret}`).toString('base64'));
  });

  it('with a configured client, prints no .env lines and never its secret', async () => {
    const secret = `cli-secret-${randomBytes(8).toString('hex')}`;
    const clients = JSON.stringify([{ clientId: 'own', secret, returnUrl: 'http://localhost:3998/verify/return' }]);
    const run = runEmulator({ EMULATOR_PORT: '0', EMULATOR_CLIENTS: clients });
    const banner = await run.banner;
    expect(banner).not.toContain('VERIFY_CLIENT_SECRET');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.output()).not.toContain(secret);
  });

  it('a quoting mistake in EMULATOR_CLIENTS exits 1 naming where it is, never the secret', async () => {
    // A letter first: a leading digit would read as the start of a number, moving the mistake.
    const secret = `k${randomBytes(12).toString('hex')}`;
    // The secret left unquoted: JSON.parse's own message quotes the text around the mistake.
    const clients = `[{"clientId":"cli-client","secret": ${secret},"returnUrl":"http://localhost:3999/verify/return"}]`;
    const run = runEmulator({ EMULATOR_PORT: '0', EMULATOR_CLIENTS: clients });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('EMULATOR_CLIENTS is not valid JSON: the mistake is at character 36');
    expect(run.output()).not.toContain(secret.slice(0, 6));
  });

  it('a quoting mistake in a --clients file exits 1 naming where it is, never the secret', async () => {
    const secret = `k${randomBytes(12).toString('hex')}`;
    const dir = mkdtempSync(join(tmpdir(), 'emulator-clients-'));
    const file = join(dir, 'clients.json');
    writeFileSync(
      file,
      `[{"clientId":"cli-client","secret": ${secret},"returnUrl":"http://localhost:3999/verify/return"}]`,
    );
    try {
      const run = runEmulator({ EMULATOR_PORT: '0' }, ['--clients', file]);
      expect(await run.exited).toBe(1);
      expect(run.output()).toContain(`--clients ${file} is not valid JSON: the mistake is at character 36`);
      expect(run.output()).not.toContain(secret.slice(0, 6));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
