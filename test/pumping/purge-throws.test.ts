/**
 * Deleting old SMS pumping counts is housekeeping a start never waits on nor fails by: a pumping
 * store whose purge throws at the call (a store of the app's own written without `async`) or
 * rejects still lets the start be sent, and the failure is only logged. On SQLite and PostgreSQL.
 */
import { afterEach, expect, it } from 'vitest';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

const lines: string[] = [];
const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
  lines.push(JSON.stringify({ level, ...obj, msg }));
};
const logger = { info: at('info'), warn: at('warn'), error: at('error') };
const purgeLogged = () => lines.filter((line) => line.includes('could not purge old SMS pumping counts')).length;

describeEachAppStore('a pumping purge that fails', (_store, storeOptions) => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** A new app (its first start purges) whose store's purge is `purge`. */
  async function appWithPurge(purge: PumpingStore['purgePumping']): Promise<TestApp> {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [addPhoneAction()], pumping: { mode: 'refuse' }, limits: GENEROUS_START_LIMITS, logger },
    });
    (app.store.pumping as PumpingStore).purgePumping = purge;
    return app;
  }

  it('a purge that throws at the call: the start is sent, the failure logged', async () => {
    const started = await appWithPurge(() => {
      throw new Error('the counters are gone');
    });
    const logged = purgeLogged();
    const user = await started.agent().signIn('purge-throws');
    expect((await user.tryStartWithNumber('add_phone', '+33612345671')).status).toBe(200);
    expect(purgeLogged()).toBe(logged + 1);
  });

  it('a purge that rejects: the start is sent, the failure logged', async () => {
    const started = await appWithPurge(() => Promise.reject(new Error('the counters are gone')));
    const logged = purgeLogged();
    const user = await started.agent().signIn('purge-rejects');
    expect((await user.tryStartWithNumber('add_phone', '+33612345672')).status).toBe(200);
    await expect.poll(purgeLogged).toBe(logged + 1);
  });
});
