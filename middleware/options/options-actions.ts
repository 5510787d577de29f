/** Checks of the integrator's guarded actions: names, sensitivity, successPath, hooks, ordering, proof. */
import { isFunction, isRecord, quote, type OptionProblems } from './option-problems.ts';
import { CONTROL } from './options-urls.ts';
import type { ActionDefinition } from '../types.ts';

const ACTION_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const SHAPE = '{ name, operationSensitivity, successPath, prepare?, fulfil }';

/** A same-origin path with a single leading "/": never a URL another site could be reached by. */
function isSafeSuccessPath(path: unknown): path is string {
  return (
    typeof path === 'string' &&
    path.startsWith('/') &&
    !path.startsWith('//') &&
    !path.includes('\\') &&
    !CONTROL.test(path)
  );
}

/** Problems of one action (already known to have a valid, unique name). */
function checkAction(problems: OptionProblems, named: string, action: Record<string, unknown>): void {
  if (action.operationSensitivity !== 'normal' && action.operationSensitivity !== 'sensitive') {
    problems.add(
      `\`${named}.operationSensitivity\` must be 'normal' or 'sensitive': got ${quote(action.operationSensitivity)}.`,
    );
  }
  if (!isSafeSuccessPath(action.successPath)) {
    problems.add(
      `\`${named}.successPath\` must be a same-origin path starting with a single "/" (e.g. "/account"): got ${quote(action.successPath)}. It is fixed on the server; never a URL from the request.`,
    );
  }
  if (!isFunction(action.fulfil)) {
    problems.add(`\`${named}.fulfil\` must be a function (tx, attempt) => void (async only on PostgreSQL).`);
  }
  if (action.prepare !== undefined && !isFunction(action.prepare)) {
    problems.add(`\`${named}.prepare\` must be a function (req, context) => params, or omitted.`);
  }
  if (action.ordering !== undefined && action.ordering !== 'latest' && action.ordering !== 'independent') {
    problems.add(
      `\`${named}.ordering\` must be 'latest' (the newest verified attempt of a user wins; the default) ` +
        `or 'independent' (every verified attempt applies): got ${quote(action.ordering)}.`,
    );
  }
  if (action.proves !== undefined && action.proves !== 'user' && action.proves !== 'destination') {
    problems.add(
      `\`${named}.proves\` must be 'user' (whoever holds the user's factor, SMS code or passkey; the default) ` +
        `or 'destination' (the user holds this phone number, e.g. confirming it): got ${quote(action.proves)}.`,
    );
  }
}

/** The actions by name; empty when they are wrong (every problem is reported). */
export function checkActions<Tx>(
  problems: OptionProblems,
  value: readonly ActionDefinition<Tx>[] | undefined,
): Map<string, ActionDefinition<Tx>> {
  const byName = new Map<string, ActionDefinition<Tx>>();
  if (!Array.isArray(value) || value.length === 0) {
    problems.add(`\`actions\` must be a non-empty array of ${SHAPE}.`);
    return byName;
  }
  const before = problems.count;
  value.forEach((action, index) => {
    const at = `actions[${index}]`;
    const fields: unknown = action;
    if (!isRecord(fields)) {
      problems.add(`\`${at}\` must be an object ${SHAPE}.`);
      return;
    }
    if (typeof fields.name !== 'string' || !ACTION_NAME.test(fields.name)) {
      problems.add(
        `\`${at}.name\` must match ${ACTION_NAME} (lowercase, e.g. "change_payout"): got ${quote(fields.name)}.`,
      );
      return;
    }
    const named = `${at} ("${action.name}")`;
    if (byName.has(action.name))
      problems.add(`\`${named}\`: the name is registered twice; action names must be unique.`);
    checkAction(problems, named, fields);
    byName.set(action.name, action);
  });
  return problems.count === before ? byName : new Map();
}
