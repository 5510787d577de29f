/**
 * A kit clock (`now`) that answers fractions of a millisecond, as one built on `performance.now()`
 * does: the kit keeps whole milliseconds, so a start is stored and texted, and its landing
 * fulfils it, on SQLite and PostgreSQL (whose columns hold whole numbers and refused a fraction).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

describeEachAppStore('a clock in fractions of a millisecond', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { now: () => performance.timeOrigin + performance.now(), pumping: { mode: 'refuse' } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('starts, texts and fulfils, its times stored in whole milliseconds', async () => {
    const user = await app.agent().signIn('fraction');
    const started = await user.start('grant_badge');
    const location = await user.verifyOnHostedPage(started);
    const landed = await user.land(new URL(location).search.slice(1));
    expect(landed.status).toBe(303);
    const attempt = await app.attempt(started.sessionId);
    expect(attempt).toMatchObject({ outcome: 'fulfilled' });
    expect(Number.isInteger(attempt?.createdAt)).toBe(true);
    expect(Number.isInteger(attempt?.fulfilledAt)).toBe(true);
  });
});
