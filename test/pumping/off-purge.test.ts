/**
 * With the rules off (`pumping: { mode: 'off' }`) what was kept while they were on is still deleted
 * past keeping, on SQLite and PostgreSQL: decisions hold client addresses and userRefs, and an app
 * that turned the rules off would otherwise keep its last 30 days of them, and its counts, for good.
 */
import { expect, it } from 'vitest';
import { appForTests } from '../support/app-for-tests.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { addPhoneAction } from '../support/actions.ts';
import { waitFor } from '../support/wait-for.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;

describeEachAppStore('the purge with the rules off', (_store, storeOptions) => {
  const app = appForTests(storeOptions, { actions: [addPhoneAction()], pumping: { mode: 'off' } });

  it('a start deletes the decisions, counts and sends kept while the rules were on, once past keeping', async () => {
    const hour = Math.floor(NOW / HOUR);
    const pumping = app().store.pumping!;
    await pumping.recordSend({
      sessionId: 'ng-old',
      keys: [{ dimension: 'country', key: 'NG' }],
      hour: hour - 16 * 24,
    });
    await pumping.recordDecision({
      decidedAt: NOW - 31 * DAY,
      decision: 'refused',
      reasons: ['country_hourly'],
      country: 'NG',
      block: '+2348031000',
      address: '203.0.113.7',
      userRef: 'someone',
    });
    const kept = async () => {
      const counts = await pumping.countsByDay({ dimension: 'country', hour, days: 17 });
      const decisions = await pumping.listDecisions({ since: 0, limit: 10 });
      return counts.filter((d) => d.daysAgo >= 16).length + decisions.length;
    };
    expect(await kept()).toBe(2);
    await app().clock.pinned(NOW, async () => {
      const user = await app().agent().signIn('someone-else');
      expect((await user.tryStartWithNumber('add_phone', '+33612345671')).status).toBe(200);
    });
    await waitFor(async () => (await kept()) === 0, 5_000, 'the purge of what was kept past keeping');
  });
});
