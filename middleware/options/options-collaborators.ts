/**
 * The kit options that hand it objects of the app's own: the store, resolveUser, the logger, a
 * ready client or the client's settings, start limits. Checked by their shape only: what each one
 * does is checked where it is used (createStartLimits checks the budgets and the counter).
 */
import { checkSettings, connectionsProblem } from '../client/client-options.ts';
import { START_LIMIT_OPTION_NAMES } from '../limits/start-limits.ts';
import type { VerifyClient } from '../types.ts';
import {
  checkKnownKeys,
  checkOptionNames,
  hasMethods,
  isFunction,
  isRecord,
  type OptionProblems,
} from './option-problems.ts';
import type { ClientSettings } from './options.ts';

/** A ready client has the client's methods; anything else passed as `client` is settings. */
export function isVerifyClient(value: VerifyClient | ClientSettings): value is VerifyClient {
  return hasMethods(value, ['createSession', 'getSession', 'close']);
}

function checkClient(problems: OptionProblems, value: unknown): void {
  if (value === undefined) return;
  if (hasMethods(value, ['createSession', 'getSession', 'close'])) return;
  if (isRecord(value) && !('createSession' in value) && !('getSession' in value)) {
    checkKnownKeys(problems, 'client', value, ['timeouts', 'retry', 'connections']);
    const problem = value.connections === undefined ? undefined : connectionsProblem(value.connections);
    if (problem !== undefined) problems.add(`\`client.connections\` ${problem}.`);
    for (const key of ['timeouts', 'retry'] as const) {
      if (value[key] !== undefined && !isRecord(value[key])) problems.add(`\`client.${key}\` must be an object.`);
      checkSettings(problems, key, value[key], 'client.');
    }
    return;
  }
  problems.add(
    '`client` must be a VerifyClient (createVerifyClient(...)), or settings { timeouts?, retry?, connections? }, or omitted.',
  );
}

export function checkCollaborators(problems: OptionProblems, o: Record<string, unknown>): void {
  if (!hasMethods(o.store, ['insertAttempt', 'findAttemptByState', 'fulfilBatch', 'recordFailure'])) {
    problems.add('`store` must be a VerifyStore, e.g. createSqliteStore({ database: "./data/app.sqlite" }).');
  }
  if (!isFunction(o.resolveUser)) {
    problems.add(
      "`resolveUser` must be a function (req) => { userRef, destination } | null giving the signed-in user's stable userRef and phone destination.",
    );
  }
  if (o.logger !== undefined && !hasMethods(o.logger, ['info', 'warn', 'error'])) {
    problems.add('`logger` must have info, warn and error methods (pino-compatible), or be omitted.');
  }
  checkClient(problems, o.client);
}

/** Only the shape: createStartLimits checks the budgets and the counter. */
export function checkLimits(problems: OptionProblems, limits: unknown, disabled: unknown): void {
  if (disabled !== undefined && typeof disabled !== 'boolean') {
    problems.add('`dangerouslyDisableStartLimits` must be true or false.');
  }
  if (disabled === true && limits !== undefined) {
    problems.add('Pass either `limits` or `dangerouslyDisableStartLimits: true`, not both.');
  }
  if (limits !== undefined && !isRecord(limits)) {
    problems.add(
      '`limits` must be start limit options ({ perUser, perDestination, perUserNumbers, perIp, store, ... }) or createStartLimits(...).',
    );
  } else if (limits !== undefined && typeof limits.consume !== 'function') {
    // `database`, an option of older releases, is told what replaced it when the limits are built.
    const named = Object.fromEntries(Object.entries(limits).filter(([key]) => key !== 'database'));
    checkOptionNames(problems, named, START_LIMIT_OPTION_NAMES, 'limits.');
  }
}
