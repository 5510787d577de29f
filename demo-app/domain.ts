/**
 * The demo's domain words, shared by its actions, pages and outbox: the action names and how an
 * account number is shown. Nothing here imports the rest of the demo.
 */

export const CONFIRM_PHONE = 'confirm_phone';
export const CHANGE_PAYOUT = 'change_payout';

export const ACTION_LABELS: Record<string, string> = {
  [CONFIRM_PHONE]: 'Confirmed phone number',
  [CHANGE_PAYOUT]: 'Changed payout account',
};

/** ••••1234: pages and activity never show a whole account number. */
export function maskAccountNumber(accountNumber: string): string {
  return `••••${accountNumber.slice(-4)}`;
}
