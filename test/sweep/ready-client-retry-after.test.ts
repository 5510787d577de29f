/**
 * A ready client the app passes (`client: myClient`) is the app's code: a 429 it reports
 * (KitError `service_busy`) with a wait no service would name (31 years, Infinity, NaN) pauses the
 * sweep of every process sharing the store as the service's own Retry-After does, at most an hour,
 * and never fails the run; a start it refuses so tells the user to retry within an hour, in a
 * Retry-After header that is a number. On SQLite and PostgreSQL.
 */
import { afterEach, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import type { VerifyClient } from '../../middleware/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const HOUR_MS = 3_600_000;

/** The real client, except that every status read answers 429 with `retryAfterSeconds`. */
function busyReads(retryAfterSeconds: number) {
  return (real: VerifyClient): VerifyClient => ({
    createSession: (input, key) => real.createSession(input, key),
    getSession: () =>
      Promise.reject(new KitError(KitErrorCode.ServiceBusy, 'busy', { serviceStatus: 429, retryAfterSeconds })),
    close: () => real.close(),
  });
}

/** When the shared pace lets the next status read of any sweep process start (wall-clock ms). */
async function sweepPausedUntil(on: TestApp): Promise<number> {
  const pace = await on.store.updateSweepPace!(() => undefined);
  return pace.pausedUntil;
}

describeEachAppStore('a ready client whose 429 names a wait no service would', (_store, storeOptions) => {
  it.each([1e9, Infinity, Number.NaN])(
    'retryAfterSeconds %s: the sweep run ends normally and every sweep waits an hour at most',
    async (retryAfterSeconds) => {
      app = await startTestApp({ ...(await storeOptions()), wrapClient: busyReads(retryAfterSeconds) });
      const alice = await app.agent().signIn('alice');
      await alice.start('grant_badge');
      const report = await app.clock.shifted(181_000, () => app!.kit.runSweep({ timeBudgetMs: 2000 }));
      expect(report).toMatchObject({ reads: 1, rateLimited: 1 });
      expect(await sweepPausedUntil(app)).toBeLessThanOrEqual(Date.now() + HOUR_MS);
    },
  );

  it('a landing that meets such a 429 slows the sweep for an hour at most', async () => {
    app = await startTestApp({ ...(await storeOptions()), wrapClient: busyReads(1e9) });
    const alice = await app.agent().signIn('alice');
    const started = await alice.start('grant_badge');
    const landing = await alice.request(await alice.verifyOnHostedPage(started));
    expect(landing.status).toBe(200);
    expect(await sweepPausedUntil(app)).toBeLessThanOrEqual(Date.now() + HOUR_MS);
  });
});

/** The real client, except that every create answers 429 with `retryAfterSeconds`. */
function busyCreates(retryAfterSeconds: number) {
  return (real: VerifyClient): VerifyClient => ({
    createSession: () =>
      Promise.reject(new KitError(KitErrorCode.ServiceBusy, 'busy', { serviceStatus: 429, retryAfterSeconds })),
    getSession: (sessionId) => real.getSession(sessionId),
    close: () => real.close(),
  });
}

describeEachAppStore('a ready client whose create names a wait no service would', (_store, storeOptions) => {
  it.each([1e9, Infinity, Number.NaN])(
    'retryAfterSeconds %s: the start says to retry within an hour, in a Retry-After header that is a number',
    async (retryAfterSeconds) => {
      app = await startTestApp({ ...(await storeOptions()), wrapClient: busyCreates(retryAfterSeconds) });
      const alice = await app.agent().signIn('alice');
      const refused = await alice.tryStart('grant_badge');
      expect(refused.status).toBe(503);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      // The page's random values (its CSP nonce, a form's token) may spell five digits by chance.
      const shown = refused.body.replace(/(nonce|value)="[^"]*"/g, '');
      expect(shown).not.toMatch(/NaN|Infinity|\d{5,}/);
    },
  );
});
