/**
 * The testing helpers' errors name the page they failed on by its origin and path: a landing's URL
 * carries the attempt's `state` and `session_id`, and another page's query a token, none of which
 * belongs in a test log.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestBrowser, verifyStepUp, walkHostedPage } from '../../testing/testing.ts';

const STATE = 'st4te-of-the-attempt-under-test';
const SESSION = 'sess-of-the-attempt-under-test';
const QUERY = `?session_id=${SESSION}&state=${STATE}`;

let server: Server;
let origin: string;
beforeAll(async () => {
  server = createServer((_req, res) => res.setHeader('content-type', 'text/html').end('<!doctype html><p>Done</p>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** The message a helper's rejection carries. */
const messageOf = (failing: Promise<unknown>) =>
  failing.then(
    () => 'resolved',
    (error: unknown) => (error as Error).message,
  );

describe('a testing helper that fails on a page', () => {
  it.each([
    [
      'submitForm',
      async () => {
        const browser = createTestBrowser();
        return browser.submitForm(await browser.get(`${origin}/verify/return${QUERY}`), {}, { action: '/elsewhere' });
      },
    ],
    ['verifyStepUp', () => verifyStepUp(`${origin}/verify/return${QUERY}`, { emulator: { control: {} as never } })],
    [
      'walkHostedPage',
      async () => {
        const browser = createTestBrowser();
        const page = await browser.get(`${origin}/verify/return${QUERY}`);
        return walkHostedPage(page, { browser, emulator: { control: {} as never } });
      },
    ],
  ])('%s names the page by its path, without its query', async (_, fails) => {
    const message = await messageOf(fails());
    expect(message).toContain(`${origin}/verify/return`);
    expect(message).not.toContain(STATE);
    expect(message).not.toContain(SESSION);
  });
});
