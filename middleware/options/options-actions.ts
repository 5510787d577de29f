/**
 * Checks of the integrator's guarded actions: names, sensitivity, successPath, hooks, ordering, proof.
 * Every problem of every action is reported, a bad name included, and an `async` fulfil is refused
 * when the store's transaction cannot span a promise (SQLite).
 */
import { checkKnownKeys, CONTROL, isFunction, isRecord, quote, type OptionProblems } from './option-problems.ts';
import type { VerifyStore } from '../store/types.ts';
import type { ActionDefinition } from '../types.ts';

export const ACTION_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const SHAPE = '{ name, operationSensitivity, successPath, prepare?, fulfil }';
/** Every key an action has: a misspelt one (`requireRecentVerifcation`) would drop its setting without a word. */
const ACTION_OPTION_NAMES = [
  'name',
  'operationSensitivity',
  'successPath',
  'ordering',
  'destination',
  'proves',
  'requireRecentVerification',
  'prepare',
  'fulfil',
];

/** A same-origin path with a single leading "/": never a URL another site could be reached by. */
export function isSafeSuccessPath(path: unknown): path is string {
  return (
    typeof path === 'string' &&
    path.startsWith('/') &&
    !path.startsWith('//') &&
    !path.includes('\\') &&
    !CONTROL.test(path)
  );
}

/** An `async function`: known when the kit is created (a plain function returning a promise is not). */
function isAsyncFunction(value: unknown): boolean {
  return typeof value === 'function' && Object.prototype.toString.call(value) === '[object AsyncFunction]';
}

function checkFulfil(problems: OptionProblems, named: string, fulfil: unknown, syncStore: boolean): void {
  if (!isFunction(fulfil)) {
    problems.add(`\`${named}.fulfil\` must be a function (tx, attempt) => void (async only on PostgreSQL).`);
  } else if (syncStore && isAsyncFunction(fulfil)) {
    problems.add(
      `\`${named}.fulfil\` is an async function, but this store's transaction is synchronous (SQLite): ` +
        'the action would finish after COMMIT, outside the transaction. Make fulfil synchronous ' +
        '(better-sqlite3 calls on `tx` are synchronous: `tx.prepare(sql).run(...)`), or use the PostgreSQL store.',
    );
  }
}

/** An entered number is only worth marking when the code texted to it, and nothing else, verified it. */
function checkDestinationSource(problems: OptionProblems, named: string, action: Record<string, unknown>): void {
  if (action.destination === undefined || action.destination === 'user') return;
  if (action.destination !== 'entered') {
    problems.add(
      `\`${named}.destination\` must be 'user' (the number resolveUser gives; the default) or 'entered' ` +
        `(the number typed into the start request's \`phone\` field): got ${quote(action.destination)}.`,
    );
  } else if (action.proves !== 'destination') {
    problems.add(
      `\`${named}\` texts the number the user entered, so it must prove that number: add \`proves: 'destination'\` ` +
        "(with 'user', a passkey of the user's could verify a number they do not hold).",
    );
  }
}

/** Problems of one action (its name is checked by the caller). */
function checkAction(
  problems: OptionProblems,
  named: string,
  action: Record<string, unknown>,
  syncStore: boolean,
): void {
  checkKnownKeys(problems, named, action, ACTION_OPTION_NAMES);
  if (action.operationSensitivity !== 'normal' && action.operationSensitivity !== 'sensitive') {
    problems.add(
      `\`${named}.operationSensitivity\` must be 'normal' or 'sensitive': got ${quote(action.operationSensitivity)}.`,
    );
  }
  if (!isFunction(action.successPath) && !isSafeSuccessPath(action.successPath)) {
    problems.add(
      `\`${named}.successPath\` must be a same-origin path starting with a single "/" (e.g. "/account"), or a function ` +
        `of the landed attempt returning one: got ${quote(action.successPath)}. It is decided on the server; never a URL from the request.`,
    );
  }
  checkFulfil(problems, named, action.fulfil, syncStore);
  if (action.prepare !== undefined && !isFunction(action.prepare)) {
    problems.add(`\`${named}.prepare\` must be a function (req, context) => params, or omitted.`);
  }
  if (action.ordering !== undefined && action.ordering !== 'latest' && action.ordering !== 'independent') {
    problems.add(
      `\`${named}.ordering\` must be 'latest' (the newest verified attempt of a user wins; the default) ` +
        `or 'independent' (every verified attempt applies): got ${quote(action.ordering)}.`,
    );
  }
  checkDestinationSource(problems, named, action);
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
  store?: Pick<VerifyStore<Tx>, 'synchronousTransactions'>,
): Map<string, ActionDefinition<Tx>> {
  const syncStore = isRecord(store) && store.synchronousTransactions === true;
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
      // Its other problems are reported too, under its index.
      checkAction(problems, at, fields, syncStore);
      return;
    }
    const named = `${at} ("${action.name}")`;
    if (byName.has(action.name))
      problems.add(`\`${named}\`: the name is registered twice; action names must be unique.`);
    checkAction(problems, named, fields, syncStore);
    byName.set(action.name, action);
  });
  return problems.count === before ? byName : new Map();
}
