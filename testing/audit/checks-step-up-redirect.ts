/**
 * After a step-up the user comes back to the guarded request itself: a URL planted in the guarded
 * request's query, its form, the start's fields or Referer never becomes a redirect, at any hop.
 */
import { parseHandoffPage, type Answer } from './agent.ts';
import { describeAnswer, MAX_HOPS, type AuditCheck, type Verdict } from './check.ts';
import { exitWithPlant, nextTarget, plantedValues, REDIRECT_PARAMS } from './checks-redirect.ts';
import type { AuditGuardedRoute } from './options.ts';
import {
  confirmationForm,
  describeRoute,
  guardedRoutes,
  pressAndVerify,
  requestRoute,
  routeMethod,
  routePath,
  submitConfirmation,
  type RequestExtras,
} from './step-up-flow.ts';
import { confirmItsYouForm } from './start-grant.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/** The names most used, planted alone in a form whose parser refused them all (it allows only a few fields). */
const FEW_FORM_NAMES = ['next', 'return_to', 'returnTo', 'redirect', 'redirect_uri', 'continue'];

/** `value` under every name in the query, and under `formNames` in the form. */
function plantsOf(value: string, formNames: readonly string[]): RequestExtras {
  return {
    query: REDIRECT_PARAMS.map((name) => `${name}=${encodeURIComponent(value)}`).join('&'),
    fields: Object.fromEntries(formNames.map((name) => [name, value])),
    headers: { referer: value.startsWith('//') ? `https:${value}` : value },
  };
}

/**
 * Follows redirects and refreshes (a Refresh header, `<meta http-equiv="refresh">`) with the user's
 * cookies while they stay on the app's origin; one off it fails, and so does a page on the way whose
 * script, or link or form off the origin, carries a planted value. Returns the last answer
 * (undefined when one failed).
 */
async function followOnOrigin(
  world: AuditWorld,
  verdict: Verdict,
  user: AuditUser,
  first: Answer,
  headers: Record<string, string>,
  what: string,
): Promise<Answer | undefined> {
  let answer = first;
  for (let hop = 0; hop <= MAX_HOPS; hop++) {
    const exit = await exitWithPlant(world, user, answer, headers);
    if (!verdict.expect(exit === undefined, `${what}, hop ${hop + 1}: ${exit} (${describeAnswer(answer)})`)) {
      return undefined;
    }
    const next = nextTarget(answer);
    if (next === undefined) return answer;
    const target = world.resolve(next, answer.url);
    const how = answer.location === next ? 'a redirect' : 'a refresh';
    if (
      !verdict.expect(
        target.origin === world.options.appOrigin,
        `${what}, hop ${hop + 1}: ${how} to ${next} leaves the app's origin (${describeAnswer(answer)})`,
      )
    ) {
      return undefined;
    }
    answer = await user.agent.request(target.href, { headers });
  }
  return answer;
}

/**
 * One walk with `value` planted everywhere (in the form under `formNames`): the user must end on the
 * guarded path (a page) or on the app's origin (a form). 'refused' when the guarded request was
 * answered 400 or 413 without the guard asking: a form parser that allows fewer fields.
 */
async function walkWithPlants(
  world: AuditWorld,
  verdict: Verdict,
  route: AuditGuardedRoute,
  value: string,
  formNames: readonly string[],
): Promise<'refused' | undefined> {
  const user = await world.signIn();
  const plants = plantsOf(value, formNames);
  const headers = plants.headers ?? {};
  const what = `${describeRoute(route, 1)} with ${value} planted${formNames === REDIRECT_PARAMS ? '' : ` (${formNames.length} names in the form)`}`;
  const asked = await requestRoute(world, user, route, 1, plants);
  if (confirmItsYouForm(world, asked) === undefined && parseHandoffPage(asked.body) === undefined) {
    verdict.note(`${what}: the guard did not ask (${describeAnswer(asked)})`);
    await followOnOrigin(world, verdict, user, asked, headers, what);
    return asked.status === 400 || asked.status === 413 ? 'refused' : undefined;
  }
  const attempt = await pressAndVerify(world, user, asked, plants);
  const landing = await world.land(user, new URL(attempt.returnLocation).search.slice(1), headers);
  verdict.note(`${what}: the landing ${describeAnswer(landing)}`);
  if (landing.location === null) {
    verdict.expect(false, `${what}: the landing answered ${landing.status}, not a redirect back`);
    return;
  }
  const guarded = new URL(routePath(route, 1), world.options.appUrl).pathname;
  if (routeMethod(route) === 'GET') {
    const end = await followOnOrigin(world, verdict, user, landing, headers, `${what}, after the landing`);
    if (end === undefined) return;
    verdict.note(`${what}: ended on ${describeAnswer(end)}`);
    verdict.expect(
      new URL(end.url).pathname === guarded && end.status === 200,
      `${what}: after the verification the user ended on ${describeAnswer(end)}, not the guarded page ${guarded}`,
    );
    return;
  }
  const back = world.resolve(landing.location, landing.url);
  const home = back.origin === world.options.appOrigin;
  if (!verdict.expect(home, `${what}: the landing sends the user to ${landing.location}`)) return;
  const { page, form } = await confirmationForm(user, route, 1, back.href, headers);
  if (form === undefined) {
    verdict.expect(false, `${what}: ${describeAnswer(page)} is not the confirmation of the kept form`);
    return;
  }
  const done = await submitConfirmation(world, user, form, headers);
  const end = await followOnOrigin(world, verdict, user, done, headers, `${what}, after the confirmation`);
  if (end !== undefined) verdict.note(`${what}: ended on ${describeAnswer(end)}`);
}

export const stepUpRedirectCheck: AuditCheck = {
  id: 'step-up.redirect',
  title:
    "After the verification the user comes back to the guarded path: a URL planted in the guarded request's query, its form, the start's fields or Referer never becomes a redirect",
  fix: 'Never redirect to a URL taken from a parameter, a header or state, nor to one your session remembered from such a parameter: the guard returns the user to the guarded request itself, kept server-side.',
  phase: 'concurrent',
  async run(world, verdict) {
    for (const route of guardedRoutes(world, verdict)) {
      // Every spelling the start's and the landing's checks plant: a "local path" test lets `/\` through.
      // Every name in the form too, and the names most used alone where the form's parser refused them all.
      for (const value of plantedValues(world)) {
        if ((await walkWithPlants(world, verdict, route, value, REDIRECT_PARAMS)) === 'refused') {
          await walkWithPlants(world, verdict, route, value, FEW_FORM_NAMES);
        }
      }
    }
  },
};
