/**
 * A step-up grant's age and the guard's clock, on SQLite and on PostgreSQL: a grant whose
 * verification started later than the guard's clock reads (started on an instance whose clock runs
 * ahead, or before a clock was set back) has an age no one can tell. Counted fresh, it would open
 * the route for maxAge plus however far that clock was ahead; it opens nothing until the guard's
 * clock reaches its start, and from then on for maxAge at most, as any grant.
 */
import { expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';

const HOUR_MS = 3_600_000;

describeEachAppStore('step-up: a grant started ahead of the guard’s clock', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  /** Verifies for the page's scope from its "Confirm it's you" page, and lands. */
  async function verifyFrom(user: Agent, html: string): Promise<void> {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    expect((await user.request(await user.verifyOnHostedPage(started))).status).toBe(303);
  }

  it('opens nothing before the guard’s clock reaches its start, then for maxAge at most', async () => {
    const user = await suite.app.agent().signIn('clock-ahead');
    // Started, verified and landed on a clock an hour ahead (another instance's, or this one's before it was set back).
    await suite.app.clock.shifted(HOUR_MS, async () => {
      await verifyFrom(user, (await user.request('/security')).body);
      expect((await user.request('/security')).body).toContain('codes for clock-ahead');
    });
    // An hour before it started: its age cannot be told, and maxAge would stretch to an hour and ten minutes.
    const before = await user.request('/security');
    expect(before.body).not.toContain('codes for clock-ahead');
    expect(before.body).toContain('Confirm it’s you');
    // Asked as anyone without a grant: its code took no longer than allowed, and no clock can say it did.
    expect(before.body).not.toContain('took longer');
    expect(before.status).toBe(200);
    expect(suite.app.logs.filter((l) => l.includes('"event":"expired"'))).toEqual([]);
    // Once the clock reaches its start it is a grant as any other: fresh for maxAge, then asked again.
    const at = (ms: number) => suite.app.clock.shifted(ms, () => user.request('/security'));
    expect((await at(HOUR_MS + (TEN_MINUTES - 60) * 1000)).body).toContain('codes for clock-ahead');
    expect((await at(HOUR_MS + (TEN_MINUTES + 60) * 1000)).body).toContain('Confirm it’s you');
    expect(suite.ran.filter((r) => r.user === 'clock-ahead')).toHaveLength(2);
  });
});
