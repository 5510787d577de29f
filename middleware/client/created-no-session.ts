/**
 * Whether a failed create certainly made no session, so sent no text: the start is then given
 * back (its budgets and the text the SMS pumping check counted). Only answers that say so count:
 * a 429 through every try, or a definite refusal (a 4xx, or a create validation error under any
 * status). A timeout, a lost answer or a 5xx may have come after the service acted, so such a
 * start stays counted.
 */
import { isKitError, KitErrorCode } from '../errors.ts';

/**
 * A 4xx the service refuses a create with (destination_required, invalid_return_url,
 * idempotency_key_reused...): it acted on nothing. 408 is a timeout, 429 is busy (told apart by
 * its code), and a 409 in flight is retried.
 */
function isRefusalStatus(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status <= 499 && status !== 408 && status !== 429;
}

/**
 * The create validation errors the interface names. It leaves their HTTP status open (a service
 * may answer them 200 with isSuccess false), so their code, not their status, says nothing was created.
 */
const VALIDATION_CODES: ReadonlySet<string> = new Set([
  'invalid_return_url',
  'invalid_channel',
  'destination_required',
  'invalid_operation_sensitivity',
]);

/**
 * True when the create's failure says no session exists. A refusal the kit's client met after a
 * try that may have created the session carries that try's failure as its `cause`: not certain.
 */
export function createdNoSession(error: unknown): boolean {
  if (isKitError(error, KitErrorCode.ServiceBusy)) return true;
  if (!isKitError(error, KitErrorCode.ServiceRejected) || error.cause !== undefined) return false;
  return isRefusalStatus(error.serviceStatus) || VALIDATION_CODES.has(error.serviceErrorCode ?? '');
}
