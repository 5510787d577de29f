/**
 * The purge of counts past keeping runs for starts the allow-list lets through unjudged too, on
 * SQLite and PostgreSQL: an app whose every start is allow-listed (its home country) would
 * otherwise keep every count and send row for good.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addPhoneAction } from '../support/actions.ts';
import { waitFor } from '../support/wait-for.ts';

const HOUR = 3_600_000;
const NOW = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;

describeEachAppStore('the purge with every start allow-listed', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [addPhoneAction()], pumping: { mode: 'refuse', alwaysAllow: { countries: ['UG'] } } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('an allow-listed start deletes the counts and sends past keeping, as a judged one does', async () => {
    const hour = Math.floor(NOW / HOUR);
    const pumping = app.store.pumping!;
    const uganda = [{ dimension: 'country' as const, key: 'UG' }];
    await pumping.recordSend({ sessionId: 'ug-old', keys: uganda, hour: hour - 16 * 24 });
    const old = async () =>
      (await pumping.countsByDay({ dimension: 'country', hour, days: 17 }))
        .filter((d) => d.key === 'UG' && d.daysAgo >= 16)
        .reduce((n, d) => n + d.sent, 0);
    expect(await old()).toBe(1);
    await app.clock.pinned(NOW, async () => {
      const user = await app.agent().signIn('ugandan');
      expect((await user.tryStartWithNumber('add_phone', '+256772000001')).status).toBe(200);
    });
    await waitFor(async () => (await old()) === 0, 5_000, 'the purge of the count past keeping');
    const sends = await app.query<{ n: number | string }>(
      "SELECT count(*) AS n FROM verify_kit_pumping_sends WHERE session_id = 'ug-old'",
    );
    expect(Number(sends[0]!.n)).toBe(0);
  });
});
