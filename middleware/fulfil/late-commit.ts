/**
 * A fulfilment whose transaction the store answered after `hookTimeouts.store`: the request was
 * answered 503 `store_unavailable`, but the write may still commit, the action then run for it.
 */
import { isKitError, isMissedDeadline, KitErrorCode } from '../errors.ts';

const lateCommits = new WeakSet<object>();

/**
 * Notes `error` as a fulfilment's late commit when it is the store's deadline that answered: told by
 * the deadline's mark, never by code, as a store of the app's own may throw `store_unavailable` itself.
 */
export function noteLateCommit(error: unknown): void {
  if (isMissedDeadline(error) && isKitError(error, KitErrorCode.StoreUnavailable)) lateCommits.add(error);
}

/** Whether `error` is a fulfilment's commit answered late (noteLateCommit). */
export function isLateCommit(error: unknown): boolean {
  return typeof error === 'object' && error !== null && lateCommits.has(error);
}
