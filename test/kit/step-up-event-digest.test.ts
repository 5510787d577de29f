/**
 * A guard bound to a long resource key keeps its digest (`sha256:<base64url>`). The outcome event
 * carries that digest as `kit.grants.list` lists it, whatever digits it happens to hold: a digest
 * is no phone number, and masked it could not be matched with the grant it made.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutcomeEvent } from '../../middleware/index.ts';
import { boundResourceKey } from '../../middleware/step-up/resource-key.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm, SCOPES, TEN_MINUTES } from '../support/step-up.ts';
import { waitFor } from '../support/wait-for.ts';

// A key too long to keep whole, whose digest holds 13 digits.
const LONG_KEY = `acct-0-${'x'.repeat(300)}`;
const DIGEST = boundResourceKey(LONG_KEY);

let app: TestApp | undefined;
const events: OutcomeEvent[] = [];
beforeAll(async () => {
  app = await startTestApp({
    kit: { scopes: [...SCOPES], onOutcome: (event) => void events.push(event) },
    ownRoutes: (own, kit) => {
      own.get(
        '/statement',
        kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES, bindTo: () => LONG_KEY }),
        (_req, res) => {
          res.type('html').send('<!doctype html><title>Statement</title><h1 id="statement">statement</h1>');
        },
      );
    },
  });
});
afterAll(async () => {
  await app?.close();
});

it('the event carries the digest of a long resource key as kit.grants.list lists it', async () => {
  expect(DIGEST.replace(/\D/g, '').length).toBeGreaterThanOrEqual(7);
  const user = await app!.agent().signIn('digest-event');
  const asked = await user.request('/statement', { headers: { 'sec-fetch-site': 'same-origin' } });
  const form = confirmForm(asked.body);
  const started = await user.start(form.action, { intent: form.intent });
  const landing = await user.request(await user.verifyOnHostedPage(started));
  expect((await user.request(landing.location!)).body).toContain('id="statement"');
  const attempt = await app!.latestAttempt();
  await waitFor(() => events.some((e) => e.sessionId === attempt.sessionId), 3000, 'the outcome event');
  const event = events.find((e) => e.sessionId === attempt.sessionId)!;
  const [grant] = await app!.kit.grants.list({ userRef: attempt.userRef, scope: 'security' });
  expect(grant?.resourceKey).toBe(DIGEST);
  expect(event.params).toMatchObject({ resourceKey: DIGEST });
});
