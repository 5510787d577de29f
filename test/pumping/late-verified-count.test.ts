/**
 * Counting a verified text for the SMS pumping rules never holds the user's return: a pumping store
 * whose markVerified never settles delays the landing (or a sweep run) by at most `hookTimeouts.limits`,
 * the attempt is fulfilled, and the lateness is only logged. A count that failed is made again the next
 * time the fulfilled attempt is read (a reload, the mobile completion posted again), or by the next
 * sweep run when its user never comes back, so a real user's verification does not stay counted
 * unverified. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { countryCountsNow } from '../support/pumping-counts.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

/** Long enough for a real store call on a loaded machine: the check before a text runs under it too. */
const LIMITS_DEADLINE_MS = 1000;
/** How long the test waits on an answer: far past the deadline, far short of forever. */
const ANSWER_WAIT_MS = 5_000;

const lines: string[] = [];
const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
  lines.push(JSON.stringify({ level, ...obj, msg }));
};
const logger = { info: at('info'), warn: at('warn'), error: at('error') };
const lateLogged = () =>
  lines.filter((line) => line.includes('could not count a verified text for the SMS pumping rules')).length;

describeEachAppStore('the count of a verified text that never settles', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        pumping: { mode: 'refuse' },
        limits: GENEROUS_START_LIMITS,
        hookTimeouts: { limits: LIMITS_DEADLINE_MS },
        logger,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Runs `body` while the store's markVerified never settles. */
  const whileCountHangs = (body: () => Promise<void>) =>
    withMethodReplaced(app.store.pumping as PumpingStore, 'markVerified', () => new Promise<never>(() => {}), body);

  it('the landing answers within hookTimeouts.limits and fulfils the attempt; the lateness is logged', async () => {
    const user = await app.agent().signIn('count-hangs');
    const started = await user.start('add_phone', { phone: '+33612345671' });
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    const logged = lateLogged();
    await whileCountHangs(async () => {
      const landed = await user.landFor(started.sessionId, started.state, {}, ANSWER_WAIT_MS);
      expect(landed.status).toBe(303);
      expect(landed.ms).toBeLessThan(LIMITS_DEADLINE_MS + 2000);
    });
    expect((await app.store.findAttemptByState(started.state))?.outcome).toBe('fulfilled');
    expect(lateLogged()).toBe(logged + 1);
  });

  it('a sweep run waits on the count within hookTimeouts.limits too, and fulfils the attempt', async () => {
    const user = await app.agent().signIn('count-hangs-swept');
    const started = await user.start('add_phone', { phone: '+33612345672' });
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    const logged = lateLogged();
    await whileCountHangs(async () => {
      const begun = performance.now();
      const report = await app.clock.shifted(181_000, () => app.kit.runSweep());
      expect(report.fulfilled).toBe(1);
      expect(performance.now() - begun).toBeLessThan(LIMITS_DEADLINE_MS + 2000);
    });
    expect((await app.store.findAttemptByState(started.state))?.outcome).toBe('fulfilled');
    expect(lateLogged()).toBe(logged + 1);
  });

  /** The counts of the user's country in the hour the text was sent. */
  const franceNow = () => countryCountsNow(app, 'FR');

  it('a count that failed at the landing is made on the next read of the fulfilled attempt, once', async () => {
    const user = await app.agent().signIn('count-fails');
    const started = await user.start('add_phone', { phone: '+33612345673' });
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    const before = await franceNow();
    const fails = () => Promise.reject(new Error('connection reset'));
    await withMethodReplaced(app.store.pumping as PumpingStore, 'markVerified', fails, async () => {
      expect((await user.landFor(started.sessionId, started.state)).status).toBe(303);
    });
    expect((await app.store.findAttemptByState(started.state))?.outcome).toBe('fulfilled');
    expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour);
    expect((await user.landFor(started.sessionId, started.state)).status).toBe(303);
    expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour + 1);
    expect((await user.landFor(started.sessionId, started.state)).status).toBe(303);
    expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour + 1);
  });

  it('counts that failed at the landing, whose users never come back, are made by the next sweep run, once each', async () => {
    const before = await franceNow();
    const fails = () => Promise.reject(new Error('connection reset'));
    // Two users of one country and hour: both texts add to the same counters.
    for (const [name, phone] of [
      ['count-fails-gone', '+33612345674'],
      ['count-fails-gone-too', '+33612345676'],
    ] as const) {
      const user = await app.agent().signIn(name);
      const started = await user.start('add_phone', { phone });
      await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
      await withMethodReplaced(app.store.pumping as PumpingStore, 'markVerified', fails, async () => {
        expect((await user.landFor(started.sessionId, started.state)).status).toBe(303);
      });
    }
    expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour);
    await app.kit.runSweep();
    expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour + 2);
    await app.kit.runSweep();
    expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour + 2);
  });

  it('a count that failed when the sweep fulfilled the attempt is made by the same run', async () => {
    const user = await app.agent().signIn('count-fails-swept');
    const started = await user.start('add_phone', { phone: '+33612345675' });
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    const before = await franceNow();
    const fails = () => Promise.reject(new Error('connection reset'));
    await withMethodReplaced(app.store.pumping as PumpingStore, 'markVerified', fails, async () => {
      const report = await app.clock.shifted(181_000, () => app.kit.runSweep());
      expect(report.fulfilled).toBe(1);
    });
    expect((await app.store.findAttemptByState(started.state))?.outcome).toBe('fulfilled');
    expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour + 1);
  });
});
