/**
 * A grant is bound to its scope, its resource and its browser session, so verifications of one
 * scope never cancel each other: one finished in a browser session still grants that session when
 * a newer one, in another session, landed first; and an older one landing after a newer one of the
 * same session leaves the newer grant in place. Same suites on every store.
 */
import { expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('step-up grants of two verifications of one scope', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  async function verifyWithoutLanding(user: Agent) {
    const form = confirmForm((await user.request('/security')).body);
    const started = await user.start(form.action, { intent: form.intent });
    return { started, location: await user.verifyOnHostedPage(started) };
  }

  it('a verification finished in one browser session still grants that session when a newer one of another session landed first', async () => {
    const laptop = await suite.app.agent().signIn('alice');
    const phone = await suite.app.agent().signIn('alice');
    const onLaptop = await verifyWithoutLanding(laptop); // older attempt
    const onPhone = await verifyWithoutLanding(phone); // newer attempt
    expect((await phone.request(onPhone.location)).status).toBe(303);
    expect((await phone.request('/security')).body).toContain('codes for alice');
    const landed = await laptop.request(onLaptop.location);
    expect((await suite.app.kit.attempts.get(onLaptop.started.sessionId))?.outcome).toBe('fulfilled');
    expect(landed.status).toBe(303);
    expect((await laptop.request('/security')).body).toContain('codes for alice');
  });

  it('an older verification landing after a newer one of the same browser session leaves the newer grant', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const older = await verifyWithoutLanding(alice);
    const newer = await verifyWithoutLanding(alice);
    expect((await alice.request(newer.location)).status).toBe(303);
    expect((await alice.request(older.location)).status).toBe(303);
    const grants = await suite.app.kit.grants.list({ userRef: 'user-alice' });
    expect(grants.map((grant) => grant.sessionId)).toContain(newer.started.sessionId);
    expect((await alice.request('/security')).body).toContain('codes for alice');
  });
});
