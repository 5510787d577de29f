/**
 * Checks of the step-up scopes (requireRecentVerification): each is declared like an action (a
 * name from the same namespace, a sensitivity, what it proves) and needs the web platform, a
 * start route, the step-up page and a store that keeps grants.
 */
import { isRecord, quote, type OptionProblems } from './option-problems.ts';
import { ACTION_NAME, isSafeSuccessPath } from './options-actions.ts';
import type { ResolvedRoutes } from './options.ts';
import type { VerifyStore } from '../store/types.ts';
import type { Platform, ScopeDefinition } from '../types.ts';

const SHAPE = '{ name, operationSensitivity, proves?, label?, successPath? }';

function checkLabel(problems: OptionProblems, named: string, label: unknown): void {
  if (label === undefined || typeof label === 'string') return;
  if (isRecord(label) && Object.values(label).every((text) => typeof text === 'string')) return;
  problems.add(
    `\`${named}.label\` must be a text, or one text per locale tag ({ en: '...', fr: '...' }): got ${quote(label)}.`,
  );
}

function checkScope(problems: OptionProblems, named: string, scope: Record<string, unknown>): void {
  if (scope.operationSensitivity !== 'normal' && scope.operationSensitivity !== 'sensitive') {
    problems.add(
      `\`${named}.operationSensitivity\` must be 'normal' or 'sensitive': got ${quote(scope.operationSensitivity)}.`,
    );
  }
  if (scope.proves !== undefined && scope.proves !== 'user' && scope.proves !== 'destination') {
    problems.add(`\`${named}.proves\` must be 'user' (the default) or 'destination': got ${quote(scope.proves)}.`);
  }
  if (scope.successPath !== undefined && !isSafeSuccessPath(scope.successPath)) {
    problems.add(
      `\`${named}.successPath\` must be a same-origin path starting with a single "/": got ${quote(scope.successPath)}.`,
    );
  }
  checkLabel(problems, named, scope.label);
}

/** What scopes need from the rest of the options. */
function checkPrerequisites(
  problems: OptionProblems,
  store: VerifyStore<unknown> | undefined,
  platform: Platform,
  routes: ResolvedRoutes,
): void {
  if (platform !== 'web') {
    problems.add("`scopes` need platform 'web': a step-up grant is bound to a browser session.");
  } else if (routes.start === false || routes.stepUp === false || routes.landing === false) {
    problems.add('`scopes` need the start route, the landing and `routes.stepUp`: leave them on.');
  }
  if (!isRecord(store) || !isRecord(store.stepUp)) {
    problems.add('`scopes` need a store that keeps step-up grants: use the SQLite or PostgreSQL store of this kit.');
  }
}

/** The scopes by name; empty when they are wrong (every problem is reported). */
export function checkScopes(
  problems: OptionProblems,
  value: readonly ScopeDefinition[] | undefined,
  context: {
    actions: ReadonlyMap<string, unknown>;
    store: VerifyStore<unknown> | undefined;
    platform: Platform;
    routes: ResolvedRoutes;
  },
): Map<string, ScopeDefinition> {
  const byName = new Map<string, ScopeDefinition>();
  if (value === undefined) return byName;
  if (!Array.isArray(value)) {
    problems.add(`\`scopes\` must be an array of ${SHAPE}, or omitted.`);
    return byName;
  }
  const before = problems.count;
  value.forEach((scope, index) => {
    const at = `scopes[${index}]`;
    const fields: unknown = scope;
    if (!isRecord(fields)) {
      problems.add(`\`${at}\` must be an object ${SHAPE}.`);
      return;
    }
    if (typeof fields.name !== 'string' || !ACTION_NAME.test(fields.name)) {
      problems.add(`\`${at}.name\` must match ${ACTION_NAME} (lowercase, e.g. "security"): got ${quote(fields.name)}.`);
      return;
    }
    const named = `${at} ("${fields.name}")`;
    if (byName.has(fields.name) || context.actions.has(fields.name)) {
      problems.add(`\`${named}\`: the name is taken; scopes and actions share one set of names.`);
    }
    checkScope(problems, named, fields);
    byName.set(fields.name, scope);
  });
  if (value.length > 0) checkPrerequisites(problems, context.store, context.platform, context.routes);
  return problems.count === before ? byName : new Map();
}
