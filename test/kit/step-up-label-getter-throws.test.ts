/**
 * The integrator's code that throws never breaks the request, and nothing stored is lost: a scope's
 * `label` is read on every step-up page, and a lazy translation's getter that throws (its catalog
 * lost a key) leaves the "Confirm it’s you" page answered without a label, as the kit's own texts
 * fall back to English. The label is read before the guard keeps the request, so a kept form
 * confirmed too late is never used up for a new one nobody is shown.
 */
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm } from '../support/step-up.ts';

let app: TestApp | undefined;
let broken = false;
const ran: string[] = [];
const MAX_AGE = 60;

beforeAll(async () => {
  app = await startTestApp({
    kit: {
      scopes: [
        {
          name: 'payout',
          operationSensitivity: 'sensitive',
          label: {
            get en(): string {
              if (broken) throw new Error('i18n: missing key scopes.payout.label');
              return 'change the payout account';
            },
          },
        },
      ],
    },
    ownRoutes: (a, kit) => {
      a.get('/payout', kit.requireRecentVerification({ scope: 'payout', maxAge: MAX_AGE }), (_req, res) => {
        res.send('<h1>payout page</h1>');
      });
      a.post(
        '/payee',
        express.urlencoded({ extended: false }),
        kit.requireRecentVerification({ scope: 'payout', maxAge: MAX_AGE }),
        (req, res) => {
          ran.push(String((req.body as { payee?: unknown }).payee));
          res.send('<h1>payee saved</h1>');
        },
      );
    },
  });
});
afterAll(async () => {
  broken = false;
  await app?.close();
});

it('a label getter that throws: the Confirm it’s you page is still answered, as a message getter’s failure is', async () => {
  const alice = await app!.agent().signIn('label-page');
  broken = true;
  try {
    const page = await alice.request('/payout');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Confirm it’s you');
  } finally {
    broken = false;
  }
});

it('a kept form confirmed too late while the label getter throws is not lost', async () => {
  const alice = await app!.agent().signIn('label-form');
  const sameOrigin = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
  const kept = await alice.postForm('/payee', { payee: 'P-lost' }, sameOrigin);
  const { action, intent } = confirmForm(kept.body);
  const started = await alice.start(action, { intent });
  const landing = await alice.request(await alice.verifyOnHostedPage(started));
  const confirmPage = await alice.request(landing.location!);
  const keptId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirmPage.body)![1]!;
  const confirm = () => alice.postForm('/payee', { _csrf: alice.csrf, _verify_kit_intent: keptId }, sameOrigin);

  // Confirmed past maxAge: the form is to be asked again, kept anew in its place.
  await app!.clock.shifted((MAX_AGE + 5) * 1000, async () => {
    broken = true;
    let answer;
    try {
      answer = await confirm();
    } finally {
      broken = false;
    }
    // Either that answer offers the form kept anew, or the form is still there to be asked again.
    const offered = /name="intent" value="([^"]+)"/.exec(answer.body)?.[1];
    if (offered === undefined) {
      const again = await confirm();
      expect(again.status, 'the kept form, asked for again once the label reads').not.toBe(409);
      expect(again.body).toContain('Confirm it’s you');
    }
  });
  expect(ran).toEqual([]);
});
