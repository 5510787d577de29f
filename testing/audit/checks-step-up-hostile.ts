/**
 * Your guarded routes against requests a browser is tricked into: a method override in lower case,
 * a hand-off relayed to another browser of the same user, and another site's form sent while the
 * user holds a fresh grant.
 */
import type { Answer } from './agent.ts';
import { describeAnswer, type AuditCheck, type Verdict } from './check.ts';
import { overrideHeaders } from './method-override.ts';
import type { AuditGuardedRoute } from './options.ts';
import {
  countEffectsAgainLater,
  countingEffects,
  describeRoute,
  grantAndOpen,
  guardAsked,
  guardAskedOrRefused,
  guardedRoutes,
  pressAndVerify,
  requestRoute,
  routeMethod,
  routePath,
  withQuery,
  type RequestExtras,
} from './step-up-flow.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/** One request naming another method: the method it is sent with, and where the override goes. */
interface OverrideRequest {
  sent: 'GET' | 'POST';
  how: string;
  extras: RequestExtras;
}

/**
 * Every way the check names `method` through an override: a POST (the method-override package
 * overrides only POST by default) with `_method` in its form, in its query, or in an override
 * header; and, for a GET route, a GET with it in its query or headers (a hand-written override may
 * read any request).
 */
function overrideRequests(route: AuditGuardedRoute, method: string): OverrideRequest[] {
  const query = new URLSearchParams({ _method: method }).toString();
  const headers = overrideHeaders(method);
  const sent = [...new Set(['POST', routeMethod(route)] as const)];
  return [
    { sent: 'POST', how: `with _method=${method} in the form`, extras: { fields: { _method: method } } },
    ...sent.flatMap((by): OverrideRequest[] => [
      { sent: by, how: `with ?_method=${method}`, extras: { query } },
      {
        sent: by,
        how: `with X-HTTP-Method-Override (and X-HTTP-Method, X-Method-Override): ${method}`,
        extras: { headers },
      },
    ]),
  ];
}

/** The route's request for resource 1 sent as `request` says: its own request when the method is the route's. */
function requestThroughOverride(
  world: AuditWorld,
  user: AuditUser,
  route: AuditGuardedRoute,
  { sent, extras }: OverrideRequest,
): Promise<Answer> {
  if (sent === routeMethod(route)) return requestRoute(world, user, route, 1, extras);
  const path = withQuery(routePath(route, 1), extras.query);
  return user.agent.postForm(path, { ...extras.fields }, { ...world.sameOrigin(), ...extras.headers });
}

const methodCase: AuditCheck = {
  id: 'step-up.method-case',
  title:
    'A guarded route reached through a method override in lower case (`_method=get`, `_method=post`, in a form, in the query or in an X-HTTP-Method-Override header) is guarded as its own method: without a grant it never opens',
  fix: "Let kit.requireRecentVerification see every request of the route, whatever the case of req.method (Express routes `get` as GET): choose nothing by req.method before it, and set a method override's value in upper case.",
  phase: 'concurrent',
  async run(world, verdict) {
    for (const route of guardedRoutes(world, verdict)) {
      const user = await world.signIn();
      const method = routeMethod(route).toLowerCase();
      let count = 0;
      for (const request of overrideRequests(route, method)) {
        const { answer, ran, before } = await countingEffects(world, route, user, () =>
          requestThroughOverride(world, user, route, request),
        );
        const what = `${describeRoute(route, 1, request.sent)} ${request.how}, without a grant`;
        verdict.note(`${what}: ${describeAnswer(answer)}; the handler ran ${ran} time(s)`);
        // Refused is not opened: an app without a method override has no POST route of a page.
        verdict.expect(guardAskedOrRefused(world, answer), `${what} opened: ${describeAnswer(answer)}`);
        verdict.expect(ran === 0, `${what}: the handler ran ${ran} time(s)`);
        count = before + ran;
      }
      // Once per route: a write queued by any of the requests above shows in the one count.
      const what = `${describeRoute(route, 1)} through a method override in lower case, without a grant`;
      countEffectsAgainLater(verdict, route, user, count, what);
    }
  },
};

const otherBrowser: AuditCheck = {
  id: 'step-up.other-browser',
  title:
    'A verification grants only the browser that asked for it: a hand-off completed and landed in another browser of the same user (relayed to her) opens the guarded page in neither',
  fix: 'Open a guarded route only through kit.requireRecentVerification: never because this user verified somewhere (kit.attempts, onOutcome, a flag kept per user); a grant belongs to the browser session that asked for it.',
  phase: 'concurrent',
  async run(world, verdict) {
    for (const route of guardedRoutes(world, verdict, 'GET')) {
      const asking = await world.signIn();
      const elsewhere = await world.signIn(asking.name, world.agent());
      const asked = await requestRoute(world, asking, route, 1);
      const what = describeRoute(route, 1);
      if (!verdict.expect(guardAsked(world, asked), `${what} without a grant opened: ${describeAnswer(asked)}`))
        continue;
      const landing = await world.landOn(elsewhere, await pressAndVerify(world, asking, asked));
      const asker = await requestRoute(world, asking, route, 1);
      const other = await requestRoute(world, elsewhere, route, 1);
      verdict.note(
        `verified and landed in another browser of the user: ${describeAnswer(landing)}; then ${what} in the browser that asked: ${describeAnswer(asker)}; in the other: ${describeAnswer(other)}`,
      );
      verdict.expect(guardAsked(world, asker), `the browser that asked opened ${what}: ${describeAnswer(asker)}`);
      verdict.expect(guardAsked(world, other), `the browser that landed opened ${what}: ${describeAnswer(other)}`);
    }
  },
};

/** Another site's form, and a sibling subdomain's (`evil.` before the app's host). */
function foreignSenders(world: AuditWorld): [string, Record<string, string>][] {
  const app = new URL(world.options.appOrigin);
  return [
    ['another site', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    ['a sibling subdomain', { origin: `${app.protocol}//evil.${app.host}`, 'sec-fetch-site': 'same-site' }],
  ];
}

/** Gets a grant for resource 1 and expects it to open the form once: otherwise nothing below would prove anything. */
async function grantedOnce(world: AuditWorld, verdict: Verdict, user: AuditUser, route: AuditGuardedRoute) {
  const { answer, ran } = await countingEffects(world, route, user, () => grantAndOpen(world, user, route, 1));
  verdict.note(`with a fresh grant, ${describeRoute(route, 1)}: ${describeAnswer(answer)}; the handler ran ${ran}`);
  return verdict.expect(
    answer.status < 400 && ran === 1,
    `a fresh grant did not open ${describeRoute(route, 1)}: ${describeAnswer(answer)}, the handler ran ${ran} time(s)`,
  );
}

/**
 * Gets `user` (holding no grant) a grant for the route's resource n and leaves its kept form
 * unconfirmed: a grant the handler never ran under, so another site's form for n is new to it (a
 * handler may refuse a repeat).
 */
async function grantedUnused(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  route: AuditGuardedRoute,
  n: number,
) {
  const asked = await requestRoute(world, user, route, n);
  if (!guardAsked(world, asked)) {
    // An open route without a grant is step-up.expired's to fail: no grant to try here.
    verdict.note(`${describeRoute(route, n)} without a grant did not ask: ${describeAnswer(asked)}`);
    return false;
  }
  const landing = await world.landOn(user, await pressAndVerify(world, user, asked));
  return verdict.expect(
    landing.location !== null,
    `the landing for ${describeRoute(route, n)} answered ${landing.status} without sending the user back`,
  );
}

/** Sends the route's request n from another site's form and expects it refused, its handler not run. */
async function expectForeignRefused(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  route: AuditGuardedRoute,
  n: number,
  [from, headers]: [string, Record<string, string>],
): Promise<void> {
  const { answer, ran, before } = await countingEffects(world, route, user, () =>
    requestRoute(world, user, route, n, { headers }),
  );
  const what = `${describeRoute(route, n)} sent from ${from} (Origin ${headers.origin})`;
  verdict.note(`${what}: ${describeAnswer(answer)}; the handler ran ${ran} time(s)`);
  verdict.expect(answer.status >= 400 || guardAsked(world, answer), `${what} was accepted: ${describeAnswer(answer)}`);
  verdict.expect(ran === 0, `${what}: the handler ran ${ran} time(s)`);
  countEffectsAgainLater(verdict, route, user, before + ran, what);
}

const crossSiteWithGrant: AuditCheck = {
  id: 'step-up.cross-site',
  title:
    'With a fresh grant, a guarded form sent from another site or a sibling subdomain is refused, and its handler does not run',
  fix: 'Let nothing skip kit.requireRecentVerification when the user holds a grant (a shortcut on kit.grants, a session flag): a grant proves who the user is, not that your site sent the form.',
  phase: 'concurrent',
  async run(world, verdict) {
    for (const route of guardedRoutes(world, verdict, 'POST')) {
      const user = await world.signIn();
      if (!(await grantedOnce(world, verdict, user, route))) continue;
      for (const [i, sender] of foreignSenders(world).entries()) {
        // Something new, as an attacker's form asks: a handler may refuse one it already carried out
        // (409). A grant of a route bound to no resource opens any request of it.
        if (route.resource !== true) {
          await expectForeignRefused(world, verdict, user, route, 2 + i, sender);
          continue;
        }
        // A bound route's grant is its resource's: resource 1's, used once; and another user's for a
        // resource the handler has not run for (that user holds no grant of resource 1 to open it).
        await expectForeignRefused(world, verdict, user, route, 1, sender);
        const other = await world.signIn();
        if (await grantedUnused(world, verdict, other, route, 2 + i)) {
          await expectForeignRefused(world, verdict, other, route, 2 + i, sender);
        }
      }
    }
  },
};

export const stepUpHostileChecks: AuditCheck[] = [methodCase, otherBrowser, crossSiteWithGrant];
