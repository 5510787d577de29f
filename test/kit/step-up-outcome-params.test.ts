/**
 * The outcome event of a step-up verification, on SQLite and on PostgreSQL: events go to logs and
 * queues, so a phone number the guarded request named (in its path, its query, or the resource
 * `bindTo` read) is masked in the event's params as its destination is, while the user is still
 * sent back to the exact page they asked for.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutcomeEvent } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, SCOPES, TEN_MINUTES } from '../support/step-up.ts';
import { waitFor } from '../support/wait-for.ts';

const NUMBER = '+447400123456';
const DIGITS = '7400123456';

describeEachAppStore('step-up: the outcome event of a guarded request naming a number', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const events: OutcomeEvent[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES], onOutcome: (event) => void events.push(event) },
      ownRoutes: (own, kit) => {
        own.get(
          '/numbers/:number/calls',
          kit.requireRecentVerification({
            scope: 'security',
            maxAge: TEN_MINUTES,
            bindTo: (req) => String(req.params.number),
          }),
          (_req, res) => {
            res.type('html').send('<!doctype html><title>Calls</title><h1 id="calls">calls</h1>');
          },
        );
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('masks the number of the kept path, its query and its resource in the event, and still returns to the page', async () => {
    const user = await app!.agent().signIn('number-event');
    const address = `/numbers/${NUMBER}/calls?with=${encodeURIComponent('07400 654321')}`;
    const asked = await user.request(address, { headers: { 'sec-fetch-site': 'same-origin' } });
    const form = confirmForm(asked.body);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.location).toBe(address);
    expect((await user.request(landing.location!)).body).toContain('id="calls"');
    const attempt = await app!.latestAttempt();
    await waitFor(() => events.some((e) => e.sessionId === attempt.sessionId), 3000, 'the outcome event');
    const event = events.find((e) => e.sessionId === attempt.sessionId)!;
    expect(event.outcome).toBe('fulfilled');
    const params = JSON.stringify(event.params);
    for (const digits of [DIGITS, '654321', '%2B44', '07400']) expect(params).not.toContain(digits);
    expect(event.params).toMatchObject({
      intentId: form.intent,
      returnPath: '/numbers/••\u00a056/calls?with=••\u00a021',
      resourceKey: '••\u00a056',
    });
  });
});
