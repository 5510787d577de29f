/**
 * The demo's domain words, shared by its actions, pages and outbox: the action names and how an
 * account number is shown. Nothing here imports the rest of the demo.
 */

export const CONFIRM_PHONE = 'confirm_phone';
export const CHANGE_PAYOUT = 'change_payout';
/** Texts the number the user types; once its code is entered it becomes the user's number. */
export const CHANGE_PHONE = 'change_phone';

/** Step-up scopes: the Security page (a GET guard) and its form that replaces the recovery codes (a POST guard). */
export const SEE_SECURITY = 'see_security';
export const NEW_RECOVERY_CODES = 'new_recovery_codes';
/** Step-up scope of the phone number change: the user confirms it's them (a code to the current number, or their passkey) before a new one is texted. */
export const CHANGE_PHONE_STEP_UP = 'phone_change';

/** Every action and step-up scope the demo runs: Activity and Verifications name each in the page's language. */
export const DEMO_ACTION_NAMES = [
  CONFIRM_PHONE,
  CHANGE_PAYOUT,
  CHANGE_PHONE,
  SEE_SECURITY,
  NEW_RECOVERY_CODES,
  CHANGE_PHONE_STEP_UP,
] as const;
export type DemoActionName = (typeof DEMO_ACTION_NAMES)[number];

export const ACTION_LABELS: Record<string, string> = {
  [CONFIRM_PHONE]: 'Confirmed phone number',
  [CHANGE_PAYOUT]: 'Changed payout account',
  [CHANGE_PHONE]: 'Changed phone number',
  [NEW_RECOVERY_CODES]: 'Replaced the recovery codes',
};

/**
 * Activity's record of a confirm_phone whose number was no longer the user's when it landed: it
 * confirmed nothing, and the page it lands on reads this to say so.
 */
const NOT_CONFIRMED = 'Not confirmed: ';
export const notConfirmedDetail = (maskedNumber: string): string =>
  `${NOT_CONFIRMED}${maskedNumber} is no longer this account’s number`;
export const confirmedNothing = (detail: string): boolean => detail.startsWith(NOT_CONFIRMED);

/** ••••1234: pages and activity never show a whole account number. */
export function maskAccountNumber(accountNumber: string): string {
  return `••••${accountNumber.slice(-4)}`;
}
