/**
 * "`verifyUrl` ... is used exactly as returned; it is not built or extended by the client." With
 * a page host of its own (`verify.localhost`, as `npm run emulator` and the demo run it), the
 * hosted page answers there only: a handoff posted to an address built from the API's base URL
 * is refused and stays unspent, and the API does not answer on the page's host.
 */
import { describe, expect, it } from 'vitest';
import { loopbackFetch } from '../../testing/loopback-fetch.ts';
import { WEB_CLIENT, newSession, postForm, readSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({ pageHost: 'verify.localhost' }, { resetEach: true });
const sameHostEmulator = useTestEmulator();

describe('the hosted page on a host of its own', () => {
  it('refuses a handoff posted to `${baseUrl}/verify` (404, unspent); verifyUrl as returned takes it', async () => {
    const { verifyUrl, handoff, sessionId } = await newSession(emulator.url, WEB_CLIENT);
    expect(new URL(verifyUrl).host).toBe(`verify.localhost:${new URL(emulator.url).port}`);
    const built = await postForm(`${emulator.url}/verify`, { hx: handoff });
    expect([built.status, ((await built.json()) as { errorCode: string }).errorCode]).toEqual([404, 'not_found']);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body.status).toBe('pending');
    const page = await postForm(verifyUrl, { hx: handoff });
    expect(page.status).toBe(200);
  });

  it('does not answer the API on the page host', async () => {
    const pageOrigin = `http://verify.localhost:${new URL(emulator.url).port}`;
    const answer = await loopbackFetch(`${pageOrigin}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(404);
  });

  it('an emulator whose page shares the API host serves both there', async () => {
    const { verifyUrl, handoff } = await newSession(sameHostEmulator.url, WEB_CLIENT);
    expect(verifyUrl).toBe(`${sameHostEmulator.url}/verify`);
    expect((await postForm(verifyUrl, { hx: handoff })).status).toBe(200);
  });
});
