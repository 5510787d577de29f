/**
 * Checks of the actions' `requireRecentVerification`: the step-up their start requires names a
 * declared scope and a `maxAge` as the guard takes them, on the web (a grant is bound to a
 * browser session).
 */
import { maxAgeProblem, scopeProblem } from '../step-up/guard-options.ts';
import type { Platform, ScopeDefinition } from '../types.ts';
import { checkKnownKeys, isRecord, quote, type OptionProblems } from './option-problems.ts';

const SHAPE = '{ scope, maxAge }';

export function checkActionStepUps(
  problems: OptionProblems,
  actions: unknown,
  context: { scopes: ReadonlyMap<string, ScopeDefinition>; platform: Platform; startRoute: boolean },
): void {
  // A kit without the start route (a sweep job's) starts nothing: the app's own action list, step-ups
  // included, is taken as it is, though such a kit declares no scopes.
  if (!Array.isArray(actions) || !context.startRoute) return;
  actions.forEach((action: unknown, index) => {
    if (!isRecord(action) || action.requireRecentVerification === undefined) return;
    const named = `actions[${index}]${typeof action.name === 'string' ? ` ("${action.name}")` : ''}.requireRecentVerification`;
    const given = action.requireRecentVerification;
    if (context.platform !== 'web') {
      problems.add(
        `\`${named}\` needs platform 'web': a step-up grant is bound to a browser session. On a mobile kit, ` +
          "leave it out and refuse the start in the action's `prepare` unless your app re-authenticated the user recently.",
      );
      return;
    }
    if (!isRecord(given)) {
      problems.add(
        `\`${named}\` must be an object ${SHAPE} (e.g. { scope: 'account', maxAge: 600 }): got ${quote(given)}.`,
      );
      return;
    }
    checkKnownKeys(problems, named, given, ['scope', 'maxAge']);
    const scope = scopeProblem(context.scopes, given.scope);
    if (scope !== undefined) problems.add(`\`${named}.scope\` ${scope}`);
    const maxAge = maxAgeProblem(given.maxAge);
    if (maxAge !== undefined) problems.add(`\`${named}.maxAge\` ${maxAge}`);
  });
}
