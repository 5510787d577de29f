/**
 * A step-up grant goes only to the browser session that asked for it, on SQLite and on PostgreSQL:
 * an attacker who holds a user's session and relays the hand-off to her (she enters the genuine
 * code on her own device) gets no grant, whether she lands or the sweep learns of the code; the
 * user's own landing grants, even when the sweep fulfilled the attempt first.
 */
import { expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('step-up and a relayed hand-off', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);
  const codesOf = (user: string) => `codes for ${user}`;
  /** A sweep run four minutes on, when the attempt is due for its first read. */
  const sweepLater = () => suite.app.clock.shifted(4 * 60_000, () => suite.app.kit.runSweep());

  /** Presses "Text me a code" on /security: the hand-off, as the auto-submit page carries it. */
  async function startFrom(user: Agent) {
    const form = confirmForm((await user.request('/security')).body);
    return user.start(form.action, { intent: form.intent });
  }

  it('the victim enters the genuine code and lands on her own device: neither her session nor the attacker’s is granted', async () => {
    const attacker = await suite.app.agent().signIn('relayed'); // holds the user's session
    const victim = await suite.app.agent().signIn('relayed'); // the user, on her own device
    const started = await startFrom(attacker);
    const landing = await victim.request(await victim.verifyOnHostedPage(started));
    expect(landing.status).toBe(303);
    expect(await suite.app.kit.attempts.get(started.sessionId)).toMatchObject({ outcome: 'fulfilled' });
    expect((await attacker.request('/security')).body).not.toContain(codesOf('relayed'));
    expect((await victim.request('/security')).body).not.toContain(codesOf('relayed'));
    expect(await suite.app.kit.grants.list({ userRef: 'user-relayed' })).toEqual([]);
    expect(suite.app.logs.some((l) => l.includes('landed in a browser session other than the one that asked'))).toBe(
      true,
    );
  });

  it('the victim enters the code and never lands: the sweep fulfils the attempt and grants nothing', async () => {
    const attacker = await suite.app.agent().signIn('relayed-swept');
    const victim = await suite.app.agent().signIn('relayed-swept');
    const started = await startFrom(attacker);
    await victim.verifyOnHostedPage(started);
    expect((await sweepLater()).fulfilled).toBe(1);
    expect((await attacker.request('/security')).body).not.toContain(codesOf('relayed-swept'));
    expect(await suite.app.kit.grants.list({ userRef: 'user-relayed-swept' })).toEqual([]);
  });

  it('the user’s own landing grants her browser session, also after the sweep fulfilled the attempt first', async () => {
    const user = await suite.app.agent().signIn('swept-first');
    const started = await startFrom(user);
    const location = await user.verifyOnHostedPage(started);
    expect((await sweepLater()).fulfilled).toBe(1);
    expect((await user.request('/security')).body).not.toContain(codesOf('swept-first'));
    const landing = await user.request(location);
    expect(landing.location).toBe('/security');
    expect((await user.request('/security')).body).toContain(codesOf('swept-first'));
    // A reload of the landing writes nothing more.
    await user.request(location);
    expect((await suite.app.kit.grants.list({ userRef: 'user-swept-first' })).map((g) => g.sessionId)).toEqual([
      started.sessionId,
    ]);
  });
});
