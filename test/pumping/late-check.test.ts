/**
 * The SMS pumping check before a text (the store's reserveSend) never holds a start: a pumping
 * store whose check never settles fails the start within `hookTimeouts.limits`, as late start
 * budgets do, with nothing sent, no budget spent and no stack shown; one that rejects fails it the
 * same way. Never let through unchecked, an allow-listed start (judged by the operators' blocks
 * alone) included. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

/** Long enough for a real store call on a loaded machine: the check before a text runs under it too. */
const LIMITS_DEADLINE_MS = 1000;
/** How long the test waits on an answer: far past the deadline, far short of forever. */
const ANSWER_WAIT_MS = 5_000;

describeEachAppStore('the SMS pumping check that never settles', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        // GB allow-listed: its starts are read for an operator's block, not counted by the check.
        pumping: { mode: 'refuse', alwaysAllow: { countries: ['GB'] } },
        limits: { ...GENEROUS_START_LIMITS, perUser: { points: 1, durationSeconds: 3600 } },
        hookTimeouts: { limits: LIMITS_DEADLINE_MS },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Runs `body` while the store's reserveSend is `check`. */
  const whileCheckIs = <T>(check: PumpingStore['reserveSend'], body: () => Promise<T>): Promise<T> =>
    withMethodReplaced(app.store.pumping as PumpingStore, 'reserveSend', check, body);

  const texts = async () => (await app.emulator.control.stats()).smsSent;

  it('a start whose check never settles fails within hookTimeouts.limits: nothing sent, no budget spent, no stack', async () => {
    const user = await app.agent().signIn('check-hangs');
    const sent = await texts();
    const answer = await whileCheckIs(
      () => new Promise<never>(() => {}),
      () => user.tryStart('add_phone', { phone: '+33612345671' }, ANSWER_WAIT_MS),
    );
    expect(answer.status).toBe(500);
    expect(answer.ms).toBeLessThan(LIMITS_DEADLINE_MS + 2000);
    expect(answer.body).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
    expect(await texts()).toBe(sent);
    // One start an hour: the failed start spent none of it.
    expect((await user.tryStartWithNumber('add_phone', '+33612345672')).status).toBe(200);
  });

  it('a check that counts the text after its deadline gives it back: the counters read as before the start', async () => {
    const user = await app.agent().signIn('check-late');
    const pumping = app.store.pumping as PumpingStore;
    const block = { dimension: 'block' as const, key: '+33612346' };
    const sentToBlock = async () => {
      const now = Date.now();
      const reading = await pumping.readPumping({ keys: [block], address: '', hour: Math.floor(now / 3_600_000), now });
      return reading.counts[0]?.sentThisHour;
    };
    const before = await sentToBlock();
    let settled = () => {};
    const counted = new Promise<void>((resolve) => (settled = resolve));
    // The check goes on only once the start has answered: past its deadline, by no sleep.
    let deadlinePassed = () => {};
    const answered = new Promise<void>((resolve) => (deadlinePassed = resolve));
    const reserveSend = pumping.reserveSend.bind(pumping);
    const answer = await whileCheckIs(
      async (query, decide) => {
        await answered;
        try {
          return await reserveSend(query, decide);
        } finally {
          settled();
        }
      },
      () => user.tryStart('add_phone', { phone: '+33612346001' }, ANSWER_WAIT_MS),
    );
    expect(answer.status).toBe(500);
    deadlinePassed();
    await counted;
    await expect.poll(sentToBlock, { timeout: 2000 }).toBe(before);
  });

  it('an allow-listed start whose check never settles fails within hookTimeouts.limits: nothing sent', async () => {
    const user = await app.agent().signIn('allowed-check-hangs');
    const sent = await texts();
    const answer = await withMethodReplaced(
      app.store.pumping as PumpingStore,
      'reserveSend',
      () => new Promise<never>(() => {}),
      () => user.tryStart('add_phone', { phone: '+447400123451' }, ANSWER_WAIT_MS),
    );
    expect(answer.status).toBe(500);
    expect(answer.ms).toBeLessThan(LIMITS_DEADLINE_MS + 2000);
    expect(answer.body).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
    expect(await texts()).toBe(sent);
    expect((await user.tryStartWithNumber('add_phone', '+447400123452')).status).toBe(200);
  });

  it('a start whose check rejects fails at once: nothing sent, no budget spent, no stack', async () => {
    const user = await app.agent().signIn('check-rejects');
    const sent = await texts();
    const answer = await whileCheckIs(
      () => Promise.reject(new Error('the counters are gone')),
      () => user.tryStart('add_phone', { phone: '+33612345673' }, ANSWER_WAIT_MS),
    );
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('the counters are gone');
    expect(answer.body).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
    expect(await texts()).toBe(sent);
    expect((await user.tryStartWithNumber('add_phone', '+33612345674')).status).toBe(200);
  });
});
