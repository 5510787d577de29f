/**
 * A step-up scope's attempt parameters as its outcome event carries them. The attempt keeps the
 * guarded request's path and resource whole (the landing sends the user back there), but events go
 * to logs and queues: a phone number the request named there is masked, as the event's destination
 * is. Read by their shape, as the kit's scope writes them: the sweep delivers events too, and a
 * sweep job's kit may declare no scopes.
 */
import { maskNumbersInPath } from '../numbers/mask-number.ts';
import { isStateShaped } from '../routes/state.ts';
import type { JsonValue } from '../types.ts';
import { shownResourceKey } from './resource-key.ts';

/** The keys of a scope's parameters (scope-actions.ts `ScopeParams`), sorted. */
const SCOPE_PARAM_KEYS = ['browserSession', 'intentId', 'resourceKey', 'returnPath'];

function isScopeShaped(params: JsonValue): params is Record<string, string> {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const keys = Object.keys(params).sort();
  return (
    keys.length === SCOPE_PARAM_KEYS.length &&
    keys.every((key, at) => key === SCOPE_PARAM_KEYS[at] && typeof params[key] === 'string')
  );
}

/** The params an event carries: a scope's with any number masked (its key as kit.grants.list shows it), any other action's as they are. */
export function eventParamsOf(params: JsonValue): JsonValue {
  if (!isScopeShaped(params)) return params;
  const { resourceKey = '', returnPath = '' } = params;
  return {
    ...params,
    resourceKey: shownResourceKey(resourceKey),
    returnPath: shownReturnPath(returnPath, params.intentId ?? ''),
  };
}

/**
 * A kept form's return path (the kit's confirmation, naming the intent by the id the kit drew)
 * with its id whole, as the event's intentId: an id is no number. Any number before it masked, as
 * in a kept page's path.
 */
function shownReturnPath(returnPath: string, intentId: string): string {
  const naming = `?intent=${encodeURIComponent(intentId)}`;
  if (!isStateShaped(intentId) || !returnPath.endsWith(naming)) return maskNumbersInPath(returnPath);
  return `${maskNumbersInPath(returnPath.slice(0, -naming.length))}${naming}`;
}
