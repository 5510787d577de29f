import { describe, expect, it } from 'vitest';
import {
  WEB_CLIENT,
  basicAuth,
  newSession,
  openHostedPage,
  postForm,
  readSession,
  sessionBody,
  useTestEmulator,
} from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

// The interface names its paths exactly and says verifyUrl is used as returned, never built or
// extended: a path that differs in case or by a trailing slash must not work here either, or an
// integration that builds its URLs wrongly passes against the emulator.
describe('the API answers only its exact paths', () => {
  it.each(['/SESSION', '/Session', '/session/'])('POST %s is 404 not_found and creates nothing', async (path) => {
    const response = await fetch(`${emulator.url}${path}`, {
      method: 'POST',
      headers: { authorization: basicAuth(WEB_CLIENT), 'content-type': 'application/json' },
      body: JSON.stringify(sessionBody(WEB_CLIENT)),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ isSuccess: false, errorCode: 'not_found' });
    const stats = await emulator.control.stats();
    expect(stats.creates).toBe(0);
    expect(stats.smsSent).toBe(0);
  });

  it('GET /session/{id}/ and /SESSION/{id} are 404, not a status read', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).status).toBe(200);
    for (const path of [`/session/${sessionId}/`, `/SESSION/${sessionId}`]) {
      const response = await fetch(`${emulator.url}${path}`, { headers: { authorization: basicAuth(WEB_CLIENT) } });
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ errorCode: 'not_found' });
    }
  });
});

describe('verifyUrl works only exactly as returned', () => {
  it.each([
    ['with a trailing slash', (url: string) => `${url}/`],
    ['in another case', (url: string) => url.replace(/\/verify$/, '/VERIFY')],
  ])('a POST of hx to verifyUrl %s is 404 and does not spend the handoff', async (_name, alter) => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    const altered = await postForm(alter(verifyUrl), { hx: handoff });
    expect(altered.status).toBe(404);
    expect(await altered.json()).toMatchObject({ isSuccess: false, errorCode: 'not_found' });
    expect((await openHostedPage(verifyUrl, handoff)).response.status).toBe(200);
  });

  it('a form of the hosted page posted to its path with a trailing slash is 404', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    const page = await openHostedPage(verifyUrl, handoff);
    const response = await postForm(
      `${verifyUrl}/code/`,
      { page_binding: page.binding ?? '', code: '000000' },
      page.deviceCookie,
    );
    expect(response.status).toBe(404);
  });
});
