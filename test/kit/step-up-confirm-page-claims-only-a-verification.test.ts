/**
 * Say only what a verification proves: the kit's step-up page (`routes.stepUp?intent=`) says "You
 * confirmed it’s you" only once a verification granted the kept form's scope and resource in its
 * browser session. A form kept a moment ago, its id opened before any verification, gets the same
 * page asking only whether the user wants it done.
 */
import { expect, it } from 'vitest';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';

const suite = useStepUpApp(async () => ({}));

it('a kept form’s step-up page says the user confirmed it’s them only after a verification did', async () => {
  const alice = await suite.app.agent().signIn('confirm-claim');
  const sameOrigin = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
  const kept = await alice.postForm('/accounts/1/payee', { payee: 'P1' }, sameOrigin);
  expect(kept.status).toBe(200);
  expect(kept.body).toContain('Confirm it’s you');
  const { intent, action } = confirmForm(kept.body);

  // No verification was started, let alone finished: nothing proves it is her.
  const unverified = await alice.request(`/verify/step-up?intent=${encodeURIComponent(intent)}`);
  expect(unverified.body).not.toContain('You confirmed it’s you');

  // Control: after the real verification the same page says it, truthfully.
  const started = await alice.start(action, { intent });
  const landing = await alice.request(await alice.verifyOnHostedPage(started));
  expect(landing.status).toBe(303);
  expect(landing.location).toBe(`/verify/step-up?intent=${encodeURIComponent(intent)}`);
  const verified = await alice.request(landing.location!);
  expect(verified.body).toContain('You confirmed it’s you');
});
