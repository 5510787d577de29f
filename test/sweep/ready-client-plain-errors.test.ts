/**
 * A ready client (the app's own VerifyClient) that throws plain errors, not the kit's KitError, may
 * mean "no answer" or "an answer I could not use"; the kit cannot tell. Each status read is paid
 * for: an attempt whose every read throws is read again after `errorRetryMs` only in its first
 * reads, then on its schedule. Before, it was read every `errorRetryMs` for the whole day (some
 * 2,800 reads at 30 s). A single plain error in the first reads is still read again soon, and a
 * KitError `service_unavailable` (the client's way to say nothing answered) after `errorRetryMs`
 * whenever it comes. Simulated day on the test clock; same suite on every store.
 */
import { expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { SWEEP_WINDOW_MS } from '../../middleware/sweep/sweep-options.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { ActionDefinition, VerifyClient } from '../../middleware/types.ts';
import { describeEachStore } from '../support/stores.ts';
import { ACTION, useSweepEmulator } from '../support/sweep-bench.ts';
import { insertDueAttempt, MIN, READ_AGES, sweepEachDueTime } from '../support/sweep-day.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const SEC = 1000;
const ERROR_RETRY_MS = 30 * SEC;

/** How the app's client answers each session's reads, by the read's number (0 the first). */
const ANSWERS: Record<string, (read: number) => Promise<{ status: 'pending' }>> = {
  // The client's own bug or parse failure: a plain error on every read.
  'always-throws': () => Promise.reject(new Error('cannot parse the status answer')),
  // One plain error, then pending.
  blip: (read) => (read === 0 ? Promise.reject(new TypeError('fetch failed')) : Promise.resolve({ status: 'pending' })),
  // Said unanswered in the kit's own terms on the fifth read, once: read again soon, though late in the list.
  'unanswered-later': (read) =>
    read === 4
      ? Promise.reject(new KitError(KitErrorCode.ServiceUnavailable, 'no answer'))
      : Promise.resolve({ status: 'pending' }),
};

const emu = useSweepEmulator();

describeEachStore('a ready client that throws plain errors', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('reads an attempt whose every read throws soon only in its first reads, then on its schedule, over a day', async () => {
    const h = await suite.open();
    const createdAt = Date.now();
    let now = createdAt;
    /** Each session's reads, as the attempt's age when the client got them. */
    const readAges = new Map<string, number[]>();
    const appClient: VerifyClient = {
      createSession: () => Promise.reject(new Error('not used by the sweep')),
      getSession: (sessionId) => {
        const ages = readAges.get(sessionId) ?? [];
        readAges.set(sessionId, [...ages, now - createdAt]);
        return ANSWERS[sessionId]!(ages.length) as ReturnType<VerifyClient['getSession']>;
      },
      close: () => Promise.resolve(),
    };
    const states: string[] = [];
    for (const sessionId of Object.keys(ANSWERS)) states.push(await insertDueAttempt(h.store, sessionId, createdAt));
    const action: ActionDefinition<unknown> = {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: '/done',
      fulfil() {},
    };
    const deps: SweepDeps<unknown> = {
      client: appClient,
      store: h.store,
      actions: new Map([[ACTION, action]]),
      now: () => now,
    };
    const nextDue = async () => {
      const stored = await Promise.all(states.map((state) => h.store.findAttemptByState(state)));
      return Math.min(...stored.map((attempt) => attempt!.nextCheckAt));
    };

    // Each run at the next time an attempt is due, for the whole day (at most 60 runs: the
    // schedule and its retries need 20; a read every 30 s would need thousands).
    await sweepEachDueTime({
      nextDue,
      end: createdAt + SWEEP_WINDOW_MS,
      setNow: (due) => (now = due),
      sweep: () => runSweep(deps, { errorRetryMs: ERROR_RETRY_MS }),
      most: 60,
    });
    expect(Object.fromEntries(readAges)).toEqual({
      // 3:00, 3:30 and 4:00, its first three reads, threw: read again after 30 s; from its fourth (4:30) on, the schedule.
      'always-throws': [3 * MIN, 3.5 * MIN, 4 * MIN, ...READ_AGES.slice(1)],
      // Threw at 3:00, answered pending at 3:30: then the schedule.
      blip: [3 * MIN, 3.5 * MIN, ...READ_AGES.slice(1)],
      'unanswered-later': [...READ_AGES.slice(0, 5), 12 * MIN + ERROR_RETRY_MS, ...READ_AGES.slice(5)],
    });
    expect(await nextDue()).toBe(createdAt + SWEEP_WINDOW_MS);
  });
});
