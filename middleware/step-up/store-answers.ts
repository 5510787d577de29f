/**
 * A step-up store's answer outside the StepUpStore interface that the kit cannot read safely (a
 * store of the app's own): the request fails closed, a 500 whose log line names the method and
 * what it returned. Never a refusal that blames the user (409, 429), and never a guess that could
 * run a kept form twice or text the user for a grant the guard would not find again.
 */
import { KitError, KitErrorCode } from '../errors.ts';

/** What a store returned, as a log line may say it: never a string's text (it may hold the store's data). */
function described(value: unknown): string {
  if (value === undefined || value === null || typeof value === 'boolean' || typeof value === 'number') {
    return String(value);
  }
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The error for an unreadable answer: `said` names the call and what it answered
 * (`stepUp.listGrants returned`), `expected` what the interface promises, `outcome` what the kit did.
 */
export function unreadableStoreAnswer(said: string, answer: unknown, expected: string, outcome: string): KitError {
  return new KitError(
    KitErrorCode.HookFailed,
    `The step-up store's ${said} ${described(answer)}, not ${expected}: ${outcome}. Make it answer as the StepUpStore interface says.`,
  );
}
