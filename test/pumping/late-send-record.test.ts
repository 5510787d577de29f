/**
 * Recording a start's send for the SMS pumping counters never holds the user's answer, on SQLite
 * and PostgreSQL: a pumping store whose attachSend (a judged start) or recordSend (an allow-listed
 * one) never settles delays the start's handoff by at most `hookTimeouts.limits`; the lateness is
 * only logged, and the start is answered as usual.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addPhoneAction } from '../support/actions.ts';

/** Long enough for a real store call on a loaded machine: the check before a text runs under it too. */
const DEADLINE_MS = 1000;

const lines: string[] = [];
const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
  lines.push(JSON.stringify({ level, ...obj, msg }));
};
const logger = { info: at('info'), warn: at('warn'), error: at('error') };
const lateLogged = () => lines.filter((l) => l.includes('could not count a text for the SMS pumping rules')).length;

describeEachAppStore("a send's record that never settles", (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        pumping: { mode: 'refuse', alwaysAllow: { countries: ['GB'] } },
        hookTimeouts: { limits: DEADLINE_MS },
        logger,
      },
    });
    const pumping = app.store.pumping as PumpingStore;
    pumping.attachSend = () => new Promise<never>(() => {});
    pumping.recordSend = () => new Promise<never>(() => {});
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['a judged start', '+33612345678'],
    ['an allow-listed start', '+447400123456'],
  ])('%s gets its handoff within hookTimeouts.limits, the late record logged', async (_name, phone) => {
    const logged = lateLogged();
    const user = await app.agent().signIn(`late-send-${phone}`);
    const answer = await user.tryStartWithNumber('add_phone', phone);
    expect(answer.status).toBe(200);
    expect(answer.ms).toBeLessThan(DEADLINE_MS + 2000);
    expect(lateLogged()).toBe(logged + 1);
  });
});
