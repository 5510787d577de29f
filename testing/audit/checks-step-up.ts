/**
 * Your routes behind kit.requireRecentVerification (the `stepUp` option): a grant expires, opens
 * only its own scope and resource, a guarded page never texts, and a kept form runs once (the
 * return after a step-up: checks-step-up-redirect.ts; tricked requests: checks-step-up-hostile.ts).
 */
import { parseHandoffPage } from './agent.ts';
import { describeAnswer, type AuditCheck, type Verdict } from './check.ts';
import { stepUpHostileChecks } from './checks-step-up-hostile.ts';
import { callHook } from './hooks.ts';
import { stepUpRedirectCheck } from './checks-step-up-redirect.ts';
import { pagesAfter } from './checks-pages.ts';
import type { AuditAction, AuditGuardedRoute } from './options.ts';
import {
  confirmationForm,
  countEffectsAgainLater,
  countingEffects,
  describeRoute,
  effectsOf,
  grantAndOpen,
  guardAsked,
  guardedRoutes,
  pressAndVerify,
  requestRoute,
  routeMethod,
  routePath,
  submitConfirmation,
} from './step-up-flow.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/**
 * Gets a grant for resource n of `route` and expects it to open the route (a page answered, or
 * the kept form's handler ran once): otherwise what follows would prove nothing.
 */
async function openWithGrant(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  route: AuditGuardedRoute,
  n: number,
): Promise<boolean> {
  const { answer, ran } = await countingEffects(world, route, user, () => grantAndOpen(world, user, route, n));
  const opened = !guardAsked(world, answer) && answer.status < 400 && (routeMethod(route) === 'GET' || ran === 1);
  verdict.note(`with a fresh grant, ${describeRoute(route, n)}: ${describeAnswer(answer)}`);
  return verdict.expect(
    opened,
    `a fresh grant did not open ${describeRoute(route, n)}: ${describeAnswer(answer)}${routeMethod(route) === 'POST' ? `, the handler ran ${ran} time(s)` : ''}`,
  );
}

/** Expects the guard to ask again for resource n of `route`, and the handler not to run. */
async function expectAsked(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  route: AuditGuardedRoute,
  n: number,
  why: string,
): Promise<void> {
  const { answer, ran, before } = await countingEffects(world, route, user, () => requestRoute(world, user, route, n));
  verdict.note(`${why}, ${describeRoute(route, n)}: ${describeAnswer(answer)}`);
  verdict.expect(guardAsked(world, answer), `${why}, ${describeRoute(route, n)} opened: ${describeAnswer(answer)}`);
  verdict.expect(ran === 0, `${why}, the handler of ${describeRoute(route, n)} ran ${ran} time(s)`);
  countEffectsAgainLater(verdict, route, user, before + ran, `${why}, ${describeRoute(route, n)}`);
}

/**
 * Each scope's first route (a grant for it) with every route of another scope (requested with that
 * grant): every scope is granted once, so the run grows with the routes, not with their pairs.
 */
function grantsAgainstOtherScopes(routes: readonly AuditGuardedRoute[]): [AuditGuardedRoute, AuditGuardedRoute[]][] {
  const firstOfScope = routes.filter((route, i) => routes.findIndex((r) => r.scope === route.scope) === i);
  return firstOfScope.map((granted) => [granted, routes.filter((other) => other.scope !== granted.scope)]);
}

/**
 * A fresh user per action verifies it (landing, and the pages after it), then requests every
 * guarded route of another scope than the action's own step-up: a verification made for an action
 * opens none (an app's onOutcome remembering "just verified" would). All are verified first, so an
 * onOutcome delivered after the landing's answer has had its time.
 */
async function actionsOpenNothing(world: AuditWorld, verdict: Verdict, routes: readonly AuditGuardedRoute[]) {
  const verified: [AuditUser, AuditAction][] = [];
  for (const action of world.options.actions) {
    const user = await world.signIn();
    const attempt = await world.verified(user, action);
    await pagesAfter(world, user, await world.landOn(user, attempt));
    verified.push([user, action]);
  }
  for (const [user, action] of verified) {
    const own = action.requireRecentVerification?.scope;
    for (const route of routes.filter((r) => r.scope !== own)) {
      await expectAsked(world, verdict, user, route, 1, `after a verification of action ${action.name}`);
    }
  }
}

/**
 * A kept form, confirmed from two tabs at once, then replayed and reloaded: its handler runs once,
 * and never before the verification.
 */
async function confirmTwice(world: AuditWorld, verdict: Verdict, route: AuditGuardedRoute): Promise<void> {
  const user = await world.signIn();
  const what = describeRoute(route, 1);
  const {
    answer: asked,
    ran: early,
    before: start,
  } = await countingEffects(world, route, user, () => requestRoute(world, user, route, 1));
  verdict.note(`${what} without a grant: ${describeAnswer(asked)}; the handler ran ${early} time(s)`);
  verdict.expect(early === 0, `${what} ran its handler ${early} time(s) before any verification`);
  if (
    !verdict.expect(
      guardAsked(world, asked),
      `${what} without a grant was not asked to confirm: ${describeAnswer(asked)}`,
    )
  ) {
    return;
  }
  const landing = await world.landOn(user, await pressAndVerify(world, user, asked));
  const back = landing.location;
  if (back === null) {
    verdict.expect(false, `the landing answered ${landing.status} without sending the user back`);
    return;
  }
  const [first, second] = await Promise.all([0, 1].map(() => confirmationForm(user, route, 1, back)));
  if (first?.form === undefined || second?.form === undefined) {
    verdict.expect(
      false,
      `${first === undefined ? back : describeAnswer(first.page)} is not the confirmation of the kept form`,
    );
    return;
  }
  const tabs = [first.form, second.form];
  const both = await Promise.all(tabs.map((form) => submitConfirmation(world, user, form)));
  const replay = await submitConfirmation(world, user, first.form);
  const reload = await confirmationForm(user, route, 1, back);
  const resent = reload.form === undefined ? undefined : await submitConfirmation(world, user, reload.form);
  const ran = (await effectsOf(world, route, user)) - start;
  verdict.note(
    `two tabs confirming at once: ${both.map((a) => a.status).join(' and ')}; a replay: ${replay.status}; a reload: ${reload.page.status}${resent === undefined ? '' : `, sent again: ${resent.status}`}; the handler ran ${ran} time(s)`,
  );
  const accepted = both.filter((answer) => answer.status < 400).length;
  verdict.expect(accepted === 1, `of two tabs confirming at once, ${accepted} were carried out (expected 1)`);
  verdict.expect(
    replay.status >= 400 && replay.status < 500,
    `a replayed confirmation answered ${replay.status}, not a refusal`,
  );
  verdict.expect(
    resent === undefined || resent.status >= 400,
    `a reloaded confirmation sent again answered ${resent?.status}`,
  );
  verdict.expect(ran === 1, `the handler ran ${ran} time(s) for one kept form (expected 1)`);
  countEffectsAgainLater(verdict, route, user, start + ran, `${what}, confirmed from two tabs, replayed and reloaded`);
}

export const stepUpChecks: AuditCheck[] = [
  {
    id: 'step-up.expired',
    title: "A grant older than the guard's maxAge is refused: the guard asks again and the handler does not run",
    fix: 'Keep every guarded route behind kit.requireRecentVerification with the maxAge your policy names, and never remember a verification yourself (a flag or a timestamp in your session).',
    phase: 'alone',
    async run(world, verdict) {
      const routes = guardedRoutes(world, verdict);
      const clock = world.options.clock ?? world.options.sweep?.clock;
      if (routes.length === 0) return;
      if (clock === undefined) {
        verdict.notRun = 'give `clock` (the createTestClock() your kit and the emulator share) to run this check';
        return;
      }
      const opened: [AuditUser, AuditGuardedRoute][] = [];
      for (const route of routes) {
        const user = await world.signIn();
        if (await openWithGrant(world, verdict, user, route, 1)) opened.push([user, route]);
      }
      // Each route just past its own maxAge, shortest first: a route that stays open past its
      // maxAge but not past a longer route's is caught too.
      const maxAges = [...new Set(opened.map(([, route]) => route.maxAge))].sort((a, b) => a - b);
      let moved = 0;
      for (const maxAge of maxAges) {
        const seconds = maxAge + 1 - moved;
        // Your clock may move it asynchronously (another process's emulator): waited for, under a deadline.
        await callHook('your clock.advance', world.options.timeoutMs, () => clock.advance({ seconds }));
        moved += seconds;
        verdict.note(`the shared clock moved ${moved} s after the grants`);
        for (const [user, route] of opened.filter(([, each]) => each.maxAge === maxAge)) {
          await expectAsked(world, verdict, user, route, 1, `${moved} s after the grant`);
        }
      }
    },
  },
  {
    id: 'step-up.bound',
    title:
      "A grant opens only its own scope and its own resource: another scope or resource key is asked again, and so is every guarded route after a verification of an action (not the action's own step-up)",
    fix: "Give each guarded route the scope of what it does, bind routes that act on a resource with bindTo(req) (the account, the payee), and never let one verification open every guarded route (no session-wide 'verified' flag, nothing remembered from onOutcome or an action's verification).",
    phase: 'concurrent',
    async run(world, verdict) {
      const routes = guardedRoutes(world, verdict);
      const grants = grantsAgainstOtherScopes(routes);
      const bound = routes.filter((route) => route.resource === true);
      if (routes.length === 0) return;
      await actionsOpenNothing(world, verdict, routes);
      if (grants.length < 2) verdict.note('scopes: not tried (every route of `stepUp` has the same scope)');
      for (const [granted, others] of grants) {
        if (others.length === 0) continue;
        const user = await world.signIn();
        if (!(await openWithGrant(world, verdict, user, granted, 1))) continue;
        for (const other of others) {
          await expectAsked(world, verdict, user, other, 1, `with a grant for scope ${granted.scope}`);
        }
      }
      if (bound.length === 0) verdict.note('resource keys: not tried (no route of `stepUp` has `resource: true`)');
      for (const route of bound) {
        const user = await world.signIn();
        if (!(await openWithGrant(world, verdict, user, route, 1))) continue;
        await expectAsked(world, verdict, user, route, 2, 'with a grant for resource 1');
      }
    },
  },
  {
    id: 'step-up.get-never-texts',
    title: 'A GET (or HEAD) of a guarded page without a grant creates no session and sends no SMS',
    fix: 'Let the guard answer a page without a grant with its "Confirm it\'s you" page; never start a verification on a GET (no auto-submit, no server-side press of the button): GET must stay safe.',
    phase: 'alone',
    async run(world, verdict) {
      const routes = guardedRoutes(world, verdict, 'GET');
      let sent: number | undefined;
      for (const route of routes) {
        const user = await world.signIn();
        const ways: [string, Record<string, string>, string][] = [
          ['a link', {}, 'GET'],
          ['a HEAD', {}, 'HEAD'],
          [
            'a top-level link from another site',
            { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', referer: 'https://evil.example/' },
            'GET',
          ],
          ['a JSON request', { accept: 'application/json' }, 'GET'],
          [
            "a click on the app's own link",
            {
              'sec-fetch-site': 'same-origin',
              'sec-fetch-mode': 'navigate',
              'sec-fetch-dest': 'document',
              'sec-fetch-user': '?1',
              referer: new URL('/', world.options.appUrl).href,
            },
            'GET',
          ],
          ['a prefetch', { purpose: 'prefetch', 'sec-purpose': 'prefetch' }, 'GET'],
        ];
        for (const [way, headers, method] of ways) {
          const before = await world.control.stats();
          const answer = await user.agent.request(routePath(route, 1), { method, headers });
          const after = await world.control.stats();
          const what = `${describeRoute(route, 1, method)} by ${way}`;
          verdict.note(`${what}: ${describeAnswer(answer)}; sessions created ${after.creates - before.creates}`);
          verdict.expect(parseHandoffPage(answer.body) === undefined, `${what} was answered with the handoff page`);
          verdict.expect(
            after.creates === before.creates,
            `${what} created ${after.creates - before.creates} session(s)`,
          );
          verdict.expect(after.smsSent === before.smsSent, `${what} sent ${after.smsSent - before.smsSent} SMS`);
          sent = after.smsSent;
        }
      }
      // A job or a hook a GET set off may text after its answer: read again once the check is done.
      if (sent !== undefined) verdict.countTextsAgainLater(sent, 'the requests of guarded pages without a grant');
    },
  },
  {
    id: 'step-up.intent-once',
    title:
      'A guarded form runs its handler only after the verification, and once: two tabs confirming at once, a replayed confirmation and a reload run nothing more',
    fix: "Put all of the handler's work after kit.requireRecentVerification (no middleware before it that writes), and answer the confirmed form with a redirect (POST, redirect, GET).",
    phase: 'concurrent',
    async run(world, verdict) {
      for (const route of guardedRoutes(world, verdict, 'POST')) await confirmTwice(world, verdict, route);
    },
  },
  stepUpRedirectCheck,
  ...stepUpHostileChecks,
];
