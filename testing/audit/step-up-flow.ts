/**
 * The step-up flow as a browser walks it, for the step-up checks: request a guarded route, press
 * the "Confirm it's you" button, verify, land, and (for a form) confirm the kept request. Each step
 * returns what the app answered; the checks judge it.
 */
import { parseHandoffPage, type Answer } from './agent.ts';
import { callCount, callHook, callSync, HookError, kindOf } from './hooks.ts';
import type { Verdict } from './check.ts';
import type { AuditAction, AuditGuardedRoute } from './options.ts';
import type { AuditUser, AuditWorld, StartedAttempt } from './world.ts';
import { confirmItsYouForm, grantWhenAsked, postFormsOf, type PageForm } from './start-grant.ts';

const NO_ROUTES = 'give your guarded routes as `stepUp: [{ path, method?, scope, maxAge, ... }]` to run this check';

/** The routes of `stepUp` (of one method when given); when there are none the check is marked not run. */
export function guardedRoutes(world: AuditWorld, verdict: Verdict, which?: 'GET' | 'POST'): AuditGuardedRoute[] {
  const all = world.options.stepUp ?? [];
  const routes = which === undefined ? all : all.filter((route) => routeMethod(route) === which);
  if (all.length === 0) verdict.notRun = NO_ROUTES;
  else if (routes.length === 0) verdict.notRun = `no route of \`stepUp\` has method '${which}'`;
  return routes;
}

/**
 * The guard asked again: its "Confirm it's you" page, a verification already started (the handoff
 * page, from an app that presses the button itself), or its 401 challenge to a script. Any other
 * 4xx may be the route's own handler answering (a 409 for a payee it already has): not the guard.
 */
export function guardAsked(world: AuditWorld, answer: Answer): boolean {
  return (
    confirmItsYouForm(world, answer) !== undefined ||
    parseHandoffPage(answer.body) !== undefined ||
    (answer.status === 401 && /^\s*VerifyKit\b/i.test(answer.headers['www-authenticate'] ?? ''))
  );
}

/** The route did not open: the guard asked, or the request was refused (a 4xx: no route has that method). */
export function guardAskedOrRefused(world: AuditWorld, answer: Answer): boolean {
  return guardAsked(world, answer) || (answer.status >= 400 && answer.status < 500);
}

export function routeMethod(route: AuditGuardedRoute): 'GET' | 'POST' {
  return route.method ?? 'GET';
}

/**
 * The route's path for resource n. What a function of n answers is held to the rule a path given
 * as a string is held to when the audit is called: a path on your app starting with one "/" (an
 * answer of undefined was requested as /undefined, one of another host left the app).
 */
export function routePath(route: AuditGuardedRoute, n: number): string {
  const { path } = route;
  if (typeof path !== 'function') return path;
  const given: unknown = callSync(`your stepUp path(${n})`, () => path(n));
  if (typeof given === 'string' && given.startsWith('/') && !given.startsWith('//')) return given;
  const what = typeof given === 'string' ? 'a string not starting with one "/"' : kindOf(given);
  throw new HookError(`your stepUp path(${n}) answered ${what}, not a path on your app (e.g. '/payees/${n}')`);
}

/** `route` as said in evidence: `POST /payees (scope payout, resource 2)`. */
export function describeRoute(route: AuditGuardedRoute, n: number, method: string = routeMethod(route)): string {
  const path = new URL(routePath(route, n), 'http://x').pathname;
  return `${method} ${path} (scope ${route.scope}${route.resource === true ? `, resource ${n}` : ''})`;
}

/** How many times the route's handler did its work for `user` (0 for a page without a count). */
export async function effectsOf(world: AuditWorld, route: AuditGuardedRoute, user: AuditUser): Promise<number> {
  const { effects } = route;
  if (effects === undefined) return 0;
  return callCount(`your stepUp effects('${user.name}')`, world.options.timeoutMs, () => effects(user.name));
}

/**
 * Sends one request and counts the times the route's handler ran meanwhile (its `effects`); `before`
 * is the count it started from.
 */
export async function countingEffects(
  world: AuditWorld,
  route: AuditGuardedRoute,
  user: AuditUser,
  send: () => Promise<Answer>,
): Promise<{ answer: Answer; ran: number; before: number }> {
  const before = await effectsOf(world, route, user);
  const answer = await send();
  return { answer, ran: (await effectsOf(world, route, user)) - before, before };
}

/**
 * Expects the route's effects for `user` still to read `count` once the run is over: a write the
 * app queued (a job, a hook after the answer) lands after the count read at the answer.
 */
export function countEffectsAgainLater(
  verdict: Verdict,
  route: AuditGuardedRoute,
  user: AuditUser,
  count: number,
  what: string,
): void {
  verdict.countLater({
    what: `your stepUp effects('${user.name}')`,
    expected: count,
    read: (world) => effectsOf(world, route, user),
    failure: (later) =>
      `${what}: by the end of the run the handler's effects for the user read ${later} (expected ${count}; a write your app made after its answer, in a job or a hook, counts too)`,
  });
}

export interface RequestExtras {
  /** Appended to the path's query. */
  query?: string;
  /** More fields of a form (POST). */
  fields?: Record<string, string>;
  headers?: Record<string, string>;
}

export function withQuery(path: string, query: string | undefined): string {
  if (query === undefined || query === '') return path;
  return `${path}${path.includes('?') ? '&' : '?'}${query}`;
}

/** Requests the guarded route for resource n as the user's browser would (a link, or its form). */
export async function requestRoute(
  world: AuditWorld,
  user: AuditUser,
  route: AuditGuardedRoute,
  n: number,
  extras: RequestExtras = {},
): Promise<Answer> {
  const path = withQuery(routePath(route, n), extras.query);
  if (routeMethod(route) === 'GET') return user.agent.request(path, { headers: { ...extras.headers } });
  const { fields } = route;
  const own =
    typeof fields === 'function'
      ? await callHook(`your stepUp fields(${n}, agent)`, world.options.timeoutMs, () => fields(n, user.agent))
      : fields;
  return user.agent.postForm(path, { ...extras.fields, ...own }, { ...world.sameOrigin(), ...extras.headers });
}

/**
 * Presses "Confirm it's you" on the guard's answer and ends the verification as verified; returns
 * the attempt. An app that started the verification itself (answered the handoff page) is followed too.
 */
export async function pressAndVerify(
  world: AuditWorld,
  user: AuditUser,
  asked: Answer,
  extras: RequestExtras = {},
): Promise<StartedAttempt> {
  let handedOff = asked;
  if (parseHandoffPage(asked.body) === undefined) {
    const form = confirmItsYouForm(world, asked);
    if (form === undefined) {
      throw new Error(
        `${new URL(asked.url).pathname} answered ${asked.status}, not the guard's "Confirm it's you" page`,
      );
    }
    handedOff = await user.agent.postForm(
      withQuery(form.action, extras.query),
      { ...extras.fields, ...form.fields },
      { ...world.sameOrigin(), ...extras.headers },
    );
  }
  const attempt = await world.attemptOf(handedOff);
  await world.control.completeSession(attempt.sessionId, 'verified');
  return attempt;
}

/**
 * The kit's confirmation of a kept form, as the landing's Location leads to it: the page's form
 * that posts to the guarded path, or back to the page's own address (the kit's step-up page, which
 * sends it on with a 307 so the page never repeats a path that may hold a phone number). Its
 * action comes back resolved against the page, as a browser resolves it.
 */
export async function confirmationForm(
  user: AuditUser,
  route: AuditGuardedRoute,
  n: number,
  location: string,
  headers: Record<string, string> = {},
): Promise<{ page: Answer; form: PageForm | undefined }> {
  const page = await user.agent.request(location, { headers });
  const pathname = new URL(routePath(route, n), 'http://x').pathname;
  const form = postFormsOf(page.body)
    .map((f) => ({ ...f, action: new URL(f.action, page.url).href }))
    .find((f) => f.action === page.url || new URL(f.action).pathname === pathname);
  return { page, form };
}

/** The most 307s or 308s on the app's own origin a confirmation is followed through, as a browser would. */
const CONFIRMATION_HOPS = 3;

/**
 * Posts a confirmation form back (as the kit's page does), and again with the same body to where a
 * 307 or 308 on the app's own origin sends it, as a browser does; a redirect elsewhere is answered as it is.
 */
export async function submitConfirmation(
  world: AuditWorld,
  user: AuditUser,
  form: PageForm,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const sent = { ...world.sameOrigin(), ...headers };
  let answer = await user.agent.postForm(form.action, form.fields, sent);
  for (let hop = 0; hop < CONFIRMATION_HOPS && (answer.status === 307 || answer.status === 308); hop++) {
    if (answer.location === null) break;
    const next = world.resolve(answer.location, answer.url);
    if (next.origin !== world.options.appOrigin) break;
    answer = await user.agent.postForm(next.href, form.fields, sent);
  }
  return answer;
}

/**
 * Gets `user` a grant for the route's resource n through the real flow and uses it once: the
 * guard's page, its button, the verification, the landing, and the page (GET) or the kept form's
 * confirmation (POST). Returns the answer of the route itself.
 */
export async function grantAndOpen(
  world: AuditWorld,
  user: AuditUser,
  route: AuditGuardedRoute,
  n: number,
): Promise<Answer> {
  const asked = await requestRoute(world, user, route, n);
  const attempt = await pressAndVerify(world, user, asked);
  const landing = await world.landOn(user, attempt);
  if (landing.location === null) {
    throw new Error(
      `the landing for ${describeRoute(route, n)} answered ${landing.status} without sending the user back`,
    );
  }
  if (routeMethod(route) === 'GET') return user.agent.request(landing.location);
  const { page, form } = await confirmationForm(user, route, n, landing.location);
  if (form === undefined) {
    throw new Error(`${new URL(page.url).pathname} answered ${page.status} without the confirmation of the kept form`);
  }
  return submitConfirmation(world, user, form);
}

/**
 * For an action whose start requires a step-up (its `requireRecentVerification`): gets `user` a
 * grant of its scope in this browser as a user does. The start answers "Confirm it's you", its
 * button starts the verification, the code texted to the user's number is entered on the hosted
 * page, and the landing makes the grant; the kept start is left unconfirmed. Returns the answer of
 * that first start (undefined for an action without the requirement). A start the app ran at once
 * is returned as it is: the check of such actions says so.
 */
export async function grantBeforeStart(
  world: AuditWorld,
  user: AuditUser,
  action: AuditAction,
): Promise<Answer | undefined> {
  if (action.requireRecentVerification === undefined) return undefined;
  const asked = await world.postStart(user, action, { asIs: true });
  await grantWhenAsked(world, user, action, asked);
  return asked;
}
