/**
 * A start that ends before its session exists gives back the text the SMS pumping check counted;
 * that give-back never holds the user's answer: a store whose releaseSend never settles delays a
 * refusal by at most `hookTimeouts.limits`, and the lateness is only logged; a failed give-back with a
 * logger that throws still answers the refusal. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

/** Long enough for a real store call on a loaded machine: the check before a text runs under it too. */
const LIMITS_DEADLINE_MS = 1000;
/** The number the app's beforeCreate hook refuses. */
const REFUSED_BY_HOOK = '+33612345679';

const addPhone = addPhoneAction();

/** The kit's log, and a switch that makes every line written to it throw. */
const lines: string[] = [];
let loggerThrows = false;
const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
  if (loggerThrows) throw new Error('the log pipe is closed');
  lines.push(JSON.stringify({ level, ...obj, msg }));
};
const logger = { info: at('info'), warn: at('warn'), error: at('error') };

describeEachAppStore('the give-back of a counted text that never settles', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhone],
        // The rules on, their floors out of reach: the starts here are refused by the hook and the budgets alone.
        pumping: {
          mode: 'refuse',
          thresholds: {
            country: { dailyFloor: 100_000, hourlyFloor: 100_000 },
            block: { dailyFloor: 100_000, hourlyFloor: 100_000 },
            address: { dailyFloor: 100_000, hourlyFloor: 100_000 },
          },
        },
        limits: { ...GENEROUS_START_LIMITS, perUser: { points: 1, durationSeconds: 3600 } },
        hookTimeouts: { limits: LIMITS_DEADLINE_MS },
        logger,
        beforeCreate: (_req, attempt) => {
          if (attempt.destination === REFUSED_BY_HOOK) {
            throw new KitError(KitErrorCode.RateLimited, 'Not this number.', { retryAfterSeconds: 60 });
          }
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Runs `body` while the store's releaseSend never settles. */
  const whileReleaseHangs = <T>(body: () => Promise<T>): Promise<T> =>
    withMethodReplaced(app.store.pumping as PumpingStore, 'releaseSend', () => new Promise<never>(() => {}), body);

  const texts = async () => (await app.emulator.control.stats()).smsSent;
  const giveBackLogged = () =>
    lines.filter((line) => line.includes('could not give back a text counted for the SMS pumping rules')).length;

  it('a start beforeCreate refuses gets its 429 within hookTimeouts.limits, nothing sent, the late give-back logged', async () => {
    const user = await app.agent().signIn('refused-by-the-hook');
    const [sent, logged] = [await texts(), giveBackLogged()];
    const answer = await whileReleaseHangs(() => user.tryStartWithNumber('add_phone', REFUSED_BY_HOOK));
    expect(answer.status).toBe(429);
    expect(answer.body).toContain('Not this number.');
    expect(answer.ms).toBeLessThan(LIMITS_DEADLINE_MS + 2000);
    expect(await texts()).toBe(sent);
    expect(giveBackLogged()).toBe(logged + 1);
  });

  it('a start beforeCreate refuses, its give-back failing and the logger throwing, still gets its 429 page without a stack', async () => {
    const user = await app.agent().signIn('refused-logger-throws');
    const releaseFails = () => Promise.reject(new Error('the counters are gone'));
    loggerThrows = true;
    try {
      await withMethodReplaced(app.store.pumping as PumpingStore, 'releaseSend', releaseFails, async () => {
        const answer = await user.tryStartWithNumber('add_phone', REFUSED_BY_HOOK);
        expect(answer.status).toBe(429);
        expect(answer.body).toContain('Not this number.');
        expect(answer.body).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
      });
    } finally {
      loggerThrows = false;
    }
  });

  it('a start the start budgets refuse gets its 429 within hookTimeouts.limits, nothing sent, the late give-back logged', async () => {
    const user = await app.agent().signIn('one-start-an-hour');
    expect((await user.tryStartWithNumber('add_phone', '+33612345670')).status).toBe(200);
    const [sent, logged] = [await texts(), giveBackLogged()];
    const answer = await whileReleaseHangs(() => user.tryStartWithNumber('add_phone', '+33612345671'));
    expect(answer.status).toBe(429);
    expect(answer.ms).toBeLessThan(LIMITS_DEADLINE_MS + 2000);
    expect(await texts()).toBe(sent);
    expect(giveBackLogged()).toBe(logged + 1);
  });
});
