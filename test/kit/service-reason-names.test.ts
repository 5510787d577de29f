/**
 * A failure reason the interface does not name is a generic failure, whatever its spelling: the
 * service's own words never borrow the text of the kit's outcomes (an attempt the kit expired, or
 * one a newer attempt replaced), which would tell the user something no verification showed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe('a reason the interface does not name reads as a generic failure (the interface: an unknown reason is a generic failure)', () => {
  for (const reason of ['superseded', 'expired']) {
    it(`the service's "${reason}" shows the generic failure page, with its start-again form, and is recorded as given`, async () => {
      const alice = await app.agent(seen).signIn('alice');
      await alice.start('grant_badge');
      const attempt = await app.latestAttempt();
      expect((await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason })).status).toBe(200);

      const landing = await alice.landFor(attempt.sessionId, attempt.state);
      const html = await landing.text();
      expect(landing.status).toBe(200);
      expect(html).toMatch(/<h1>Verification failed<\/h1>/);
      expect(html).not.toMatch(/A newer request replaced this one|Verification expired/);
      expect(html).toContain('<form method="post" action="/verify/start">');
      expect(app.grants(attempt.sessionId)).toBe(0);
      expect(await app.attempt(attempt.sessionId)).toMatchObject({ outcome: 'failed', failureReason: reason });
    });
  }
});
