/**
 * Two step-up guards on one route, on SQLite and PostgreSQL: an area's (an admin section asking
 * for a verification in the last ten minutes) and a stricter one of the route's own (a payee form
 * asking for its own, in the last five minutes). A form the route's guard keeps comes back through
 * the area's guard: with the area's grant fresh it is handed on and runs once; with it too old,
 * the area asks first, and the form still runs once, never without both verifications.
 */
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm, SCOPES } from '../support/step-up.ts';

describeEachAppStore('an area’s step-up guard before a route’s stricter one', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const saved: { user: string; iban: unknown }[] = [];
  const savedBy = (user: string) => saved.filter((s) => s.user === user).map((s) => s.iban);
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (routes: express.Express, kit) => {
        const admin = express.Router();
        admin.use(
          express.urlencoded({ extended: false }),
          kit.requireRecentVerification({ scope: 'security', maxAge: 600 }),
        );
        admin.get('/', (_req, res) => {
          res.type('html').send('<h1>admin home</h1>');
        });
        admin.post('/payee', kit.requireRecentVerification({ scope: 'payout', maxAge: 300 }), (req, res) => {
          const user = String((req.session as { user?: string }).user);
          saved.push({ user, iban: (req.body as { iban?: unknown }).iban });
          res.type('html').send('<h1>payee saved</h1>');
        });
        routes.use('/admin', admin);
        // One scope twice: the area's guard binds no resource, the route's binds the account.
        const team = express.Router();
        team.use(
          express.urlencoded({ extended: false }),
          kit.requireRecentVerification({ scope: 'payout', maxAge: 600 }),
        );
        team.post(
          '/:account/payee',
          kit.requireRecentVerification({ scope: 'payout', maxAge: 300, bindTo: (req) => String(req.params.account) }),
          (req, res) => {
            const user = String((req.session as { user?: string }).user);
            saved.push({ user, iban: `${req.params.account} ${String((req.body as { iban?: unknown }).iban)}` });
            res.type('html').send('<h1>payee saved</h1>');
          },
        );
        routes.use('/team', team);
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Verifies from a "Confirm it's you" page; returns where the landing sent the user. */
  async function verifyFrom(user: Agent, html: string): Promise<string> {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.status).toBe(303);
    return landing.location!;
  }

  /** The kept request the confirmation page at `path` names. */
  async function keptIntentAt(user: Agent, path: string): Promise<string> {
    const page = await user.request(path);
    const intent = /name="_verify_kit_intent" value="([^"]+)"/.exec(page.body)?.[1];
    if (intent === undefined) throw new Error(`no confirmation at ${path}: ${page.body.slice(0, 300)}`);
    return intent;
  }

  /** Posts the confirmation of `intent` as the user's browser does. */
  function confirm(user: Agent, intent: string) {
    const sameOrigin = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    return user.postForm('/admin/payee', { _csrf: user.csrf, _verify_kit_intent: intent }, sameOrigin);
  }

  /** Opens the confirmation page at `path` and posts it. */
  async function confirmAt(user: Agent, path: string) {
    return confirm(user, await keptIntentAt(user, path));
  }

  it('with the area’s grant fresh, the route’s kept form is confirmed through the area’s guard and runs once', async () => {
    const user = await app!.agent().signIn('stacked-fresh');
    expect(await verifyFrom(user, (await user.request('/admin/')).body)).toBe('/admin/');
    const sameOrigin = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm('/admin/payee', { iban: 'STACKED-1' }, sameOrigin);
    expect(kept.body).toContain('Confirm it’s you');
    const intent = await keptIntentAt(user, await verifyFrom(user, kept.body));
    expect((await confirm(user, intent)).body).toContain('payee saved');
    expect((await confirm(user, intent)).status).toBe(409);
    expect(savedBy('stacked-fresh')).toEqual(['STACKED-1']);
  });

  it('an area’s guard of the same scope binding no resource hands the route’s kept form (bound to its account) on to the route’s guard, which runs it once', async () => {
    const user = await app!.agent().signIn('stacked-same-scope');
    const sameOrigin = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    // The area's guard keeps the form first, then, once confirmed, the route's guard for the account.
    const areaKept = await user.postForm('/team/acct-5/payee', { iban: 'SAME-1' }, sameOrigin);
    const areaIntent = await keptIntentAt(user, await verifyFrom(user, areaKept.body));
    const confirmTo = (intent: string) =>
      user.postForm('/team/acct-5/payee', { _csrf: user.csrf, _verify_kit_intent: intent }, sameOrigin);
    const routeKept = await confirmTo(areaIntent);
    expect(routeKept.body).toContain('Confirm it’s you');
    const routeIntent = await keptIntentAt(user, await verifyFrom(user, routeKept.body));
    expect((await confirmTo(routeIntent)).body).toContain('payee saved');
    expect((await confirmTo(routeIntent)).status).toBe(409);
    expect(savedBy('stacked-same-scope')).toEqual(['acct-5 SAME-1']);
  });

  it('with the area’s grant grown too old, its guard asks first for the route’s confirmation, and the form then runs once', async () => {
    const user = await app!.agent().signIn('stacked-area-old');
    const sameOrigin = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    // Eleven minutes ago: the area's verification, and the form the route's guard kept.
    const kept = await app!.clock.shifted(-11 * 60_000, async () => {
      await verifyFrom(user, (await user.request('/admin/')).body);
      return user.postForm('/admin/payee', { iban: 'STACKED-2' }, sameOrigin);
    });
    expect(kept.body).toContain('Confirm it’s you');
    // Now the route's verification; the area's is too old, so its guard asks before handing the confirmation on.
    const areaAsks = await confirmAt(user, await verifyFrom(user, kept.body));
    expect(areaAsks.body).toContain('Confirm it’s you');
    expect(savedBy('stacked-area-old')).toEqual([]);
    const confirmed = await confirmAt(user, await verifyFrom(user, areaAsks.body));
    expect(confirmed.body).toContain('payee saved');
    expect(savedBy('stacked-area-old')).toEqual(['STACKED-2']);
  });
});
