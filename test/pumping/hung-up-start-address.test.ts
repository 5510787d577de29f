/**
 * A client that hangs up right after sending its start is still judged by its address: the start
 * keeps the address it arrived from (a closed socket has none left, and the rules and budgets read
 * it after the body, the session and `prepare`). An operator's block of the address refuses it, and
 * nothing is counted under the shared key of starts with no address.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { waitFor } from '../support/wait-for.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    kit: {
      // The app's own prepare reads its database before the start goes on (here: 200 ms).
      actions: [{ ...addPhoneAction(), prepare: () => new Promise((r) => setTimeout(() => r(null), 200)) }],
      limits: GENEROUS_START_LIMITS,
      pumping: { mode: 'refuse' },
    },
  });
});
afterAll(async () => {
  await app?.close();
});

/** POSTs the start over a raw connection and closes it at once, without reading the answer. */
async function startAndHangUp(cookie: string, csrf: string, phone: string): Promise<void> {
  const url = new URL(app.url);
  const body = new URLSearchParams({ _csrf: csrf, action: 'add_phone', phone }).toString();
  const request =
    `POST /verify/start HTTP/1.1\r\nHost: ${url.host}\r\nOrigin: ${url.origin}\r\nSec-Fetch-Site: same-origin\r\n` +
    `Cookie: ${cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  await new Promise<void>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(request, () => {
        socket.destroy();
        resolve();
      });
    });
    socket.on('error', reject);
  });
}

it("an operator's block of the address refuses its starts, and still does when the client hangs up", async () => {
  expect(await app.kit.pumping.block({ address: '127.0.0.1' })).toMatchObject({ key: '127.0.0.1' });
  const user = await app.agent().signIn('hangs-up');
  expect((await user.tryStartWithNumber('add_phone', '+33612345601')).status).toBe(429);
  const before = (await app.emulator.control.outbox()).length;
  await startAndHangUp(user.cookieFor(user.origin) ?? '', user.csrf, '+33612345602');
  // The start runs to its end after the hang-up: refused as the address's, its decision recorded.
  await waitFor(async () => (await app.kit.pumping.decisions()).length >= 2, 10_000, 'the second refusal');
  const texts = (await app.emulator.control.outbox()).length - before;
  const now = app.clock.now();
  const reading = await app.store.pumping!.readPumping({
    keys: [{ dimension: 'address', key: 'unparseable' }],
    address: 'unparseable',
    hour: Math.floor(now / 3_600_000),
    now,
  });
  expect({ texts, sentUnderUnparseable: reading.counts[0]!.sentThisHour }).toEqual({
    texts: 0,
    sentUnderUnparseable: 0,
  });
});
