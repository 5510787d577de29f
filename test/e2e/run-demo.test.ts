/**
 * `npm run demo` as a person uses it: one process starts the emulator and the demo (on fixed
 * loopback ports), prints where to go; a browser signs in, reads the code from the emulator's
 * inbox page, verifies; SIGTERM stops everything with exit code 0. The secret is never printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { freePort } from '../support/listen.ts';

let child: ChildProcess | undefined;
let browser: Browser | undefined;
let dir: string;
let output = '';
const secret = `run-demo-secret-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-run-'));
  browser = await launchBrowser();
});

afterAll(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('npm run demo with only PORT set: prints the URLs, a person completes a verification with the inbox code, SIGTERM stops it', async () => {
  const port = await freePort('localhost');
  const emulatorPort = await freePort('127.0.0.1');
  child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../../demo-app/run.ts')], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      EMULATOR_PORT: String(emulatorPort),
      VERIFY_CLIENT_SECRET: secret,
      DATABASE_PATH: join(dir, 'demo.sqlite'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await expect.poll(() => output, { timeout: 15_000, interval: 100 }).toContain('Ctrl-C stops everything');

  const demoUrl = /Demo app\s+(http:\/\/localhost:\d+)/.exec(output)?.[1];
  const inboxUrl = /SMS codes\s+(http:\/\/127\.0\.0\.1:\d+\/_dev\/inbox)/.exec(output)?.[1];
  expect(demoUrl).toBe(`http://localhost:${port}`);
  expect(inboxUrl).toBe(`http://127.0.0.1:${emulatorPort}/_dev/inbox`);
  // The demo users are named with their numbers masked, as every page and log line shows them.
  expect(output).toContain('Alice (••\u00a001)');
  expect(output).not.toContain('+15550100001');

  const context = await browser!.newContext();
  context.setDefaultTimeout(8000);
  const page = await context.newPage();
  await page.goto(demoUrl!);
  await page.getByRole('button', { name: 'Sign in as Bob Okafor' }).click();
  await page.waitForURL(`${demoUrl}/`);
  await page.locator('#accountNumber').fill('4444 3333 2222 11');
  await page.getByRole('button', { name: 'Change payout account' }).click();
  await page.locator('#code').waitFor();

  const inbox = await context.newPage();
  await inbox.goto(inboxUrl!);
  const row = inbox.locator('tbody tr').filter({ hasText: '+15550100002' }).first();
  const code = (await row.locator('.code').innerText()).trim();
  expect(code).toMatch(/^\d{6}$/);
  await inbox.close();

  await page.locator('#code').fill(code);
  await page.getByRole('button', { name: 'Verify' }).click();
  // The hosted page (on verify.localhost, where passkeys work) offers a passkey; this person declines.
  await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
  expect(new URL(page.url()).host).toBe(`verify.localhost:${emulatorPort}`);
  await page.getByRole('button', { name: 'Not now' }).click();
  await page.waitForURL(`${demoUrl}/verified/payout`);
  await page.getByText('Payouts now go to the account ending 2211.').waitFor();
  const me = (await (await context.request.get(`${demoUrl}/api/me`)).json()) as {
    actions: Array<{ action: string; sessionId: string }>;
  };
  expect(me.actions).toEqual([
    expect.objectContaining({ action: 'change_payout', sessionId: expect.stringMatching(/\S/) }),
  ]);
  await context.close();

  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(output).toContain('"msg":"stopped"');
  expect(output).not.toContain(secret);
  // The emulator's line for the text it sent is printed with the number masked too.
  expect(output).toMatch(/\[emulator\] SMS to ••\u00a002: your code is \d{6}/);
  expect(output).not.toMatch(/\+1555010000\d/);
});
