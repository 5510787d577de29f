/**
 * Recording an SMS pumping decision never holds the user's answer, on SQLite and PostgreSQL: a
 * pumping store whose recordDecision never settles delays a refused start's 429, and a start the
 * rules let through with a warning (record mode), by at most `hookTimeouts.limits`; the lateness
 * is only logged, and the refused start sends nothing while the warned one is sent.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingOptions } from '../../middleware/index.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addPhoneAction } from '../support/actions.ts';

const HOUR = 3_600_000;
const NOW = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
/** Long enough for a real store call on a loaded machine: the check before a text runs under it too. */
const DEADLINE_MS = 1000;
/** Nigerian mobiles, each in a block of its own: the fifth trips the country's hourly rule. */
const NG = ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001', '+2348035000001'];

const lines: string[] = [];
const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
  lines.push(JSON.stringify({ level, ...obj, msg }));
};
const logger = { info: at('info'), warn: at('warn'), error: at('error') };
const lateLogged = () => lines.filter((l) => l.includes('could not record an SMS pumping decision')).length;

describeEachAppStore('a decision record that never settles', (_store, storeOptions) => {
  const apps: TestApp[] = [];
  const appWith = async (pumping: PumpingOptions) => {
    const app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [addPhoneAction()], pumping, hookTimeouts: { limits: DEADLINE_MS }, logger },
    });
    apps.push(app);
    // The decision's record never settles; everything else the store does, it does.
    (app.store.pumping as PumpingStore).recordDecision = () => new Promise<never>(() => {});
    return app;
  };
  let refusing: TestApp;
  let recording: TestApp;
  beforeAll(async () => {
    refusing = await appWith({ mode: 'refuse' });
    recording = await appWith({ mode: 'record' });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  /** Four texts to NG never verified: the next start to NG trips the country's rule. */
  async function tripNigeria(app: TestApp): Promise<void> {
    for (const phone of NG.slice(0, 4)) {
      const user = await app.agent().signIn(`someone-${phone}`);
      expect((await user.tryStartWithNumber('add_phone', phone)).status).toBe(200);
    }
  }
  const texts = async (app: TestApp) => (await app.emulator.control.outbox()).length;

  it('a refused start gets its 429 within hookTimeouts.limits, nothing sent, the late record logged', async () => {
    await refusing.clock.pinned(NOW, async () => {
      await tripNigeria(refusing);
      const [sent, logged] = [await texts(refusing), lateLogged()];
      const answer = await (await refusing.agent().signIn('refused')).tryStartWithNumber('add_phone', NG[4]!);
      expect(answer.status).toBe(429);
      expect(answer.ms).toBeLessThan(DEADLINE_MS + 2000);
      expect(await texts(refusing)).toBe(sent);
      expect(lateLogged()).toBe(logged + 1);
    });
  });

  it('a start sent with a warning (record mode) is answered within hookTimeouts.limits, the late record logged', async () => {
    await recording.clock.pinned(NOW, async () => {
      await tripNigeria(recording);
      const [sent, logged] = [await texts(recording), lateLogged()];
      const answer = await (await recording.agent().signIn('warned')).tryStartWithNumber('add_phone', NG[4]!);
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(DEADLINE_MS + 2000);
      expect(await texts(recording)).toBe(sent + 1);
      expect(lateLogged()).toBe(logged + 1);
    });
  });
});
