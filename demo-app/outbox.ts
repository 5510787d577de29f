/**
 * The demo's one visible side effect outside the fulfil transaction: an "email" to the user for
 * every outcome, written by the kit's after-commit `onOutcome` hook into an outbox table shown on
 * the Activity page. A real app would hand the same event to its mailer.
 *
 * Delivery is at least once, so the event id is the outbox's primary key: a re-delivery (after a
 * crash between commit and hook, say) never sends a second email.
 */
import type { Database } from 'better-sqlite3';
import type { OutcomeEvent } from 'hosted-sms-verify-kit';
import { CHANGE_PAYOUT, maskAccountNumber } from './domain.ts';

export interface OutboxEmail {
  subject: string;
  body: string;
}

function maskedAccount(event: OutcomeEvent): string {
  const params = event.params;
  const isObject = typeof params === 'object' && params !== null && !Array.isArray(params);
  const value = isObject ? params.accountNumber : undefined;
  return typeof value === 'string' ? maskAccountNumber(value) : 'a new account';
}

/** The email text for an outcome (no secret, no handoff: only what the user already knows). */
export function emailFor(event: OutcomeEvent): OutboxEmail {
  const payout = event.action === CHANGE_PAYOUT;
  const what = payout ? `changing your payout account to ${maskedAccount(event)}` : 'confirming your phone number';
  switch (event.outcome) {
    case 'fulfilled':
      if (payout) {
        const account = maskedAccount(event);
        const body = `Payouts now go to the account ending ${account.slice(-4)}. If this was not you, contact us.`;
        return { subject: 'Your payout account was changed', body };
      }
      return {
        subject: 'Phone number confirmed',
        body: `You confirmed ${event.destination ?? 'your number'} with a code.`,
      };
    case 'failed':
      return {
        subject: 'A verification did not succeed',
        body: `The verification for ${what} failed. Nothing was changed.`,
      };
    case 'expired':
      return {
        subject: 'A verification expired',
        body: `The verification for ${what} was not finished in time. Nothing was changed.`,
      };
    case 'superseded':
      return {
        subject: 'An older request was not applied',
        body: `The request for ${what} was replaced by a newer one you confirmed, so it will never be applied.`,
      };
  }
}

/** The onOutcome hook: one outbox row per event, however often it is delivered. */
export function createOutboxHook(db: Database): (event: OutcomeEvent) => void {
  const insert = db.prepare(
    `INSERT INTO demo_outbox (event_id, user_id, session_id, outcome, subject, body, at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (event_id) DO NOTHING`,
  );
  return (event) => {
    const email = emailFor(event);
    const { eventId, userRef, sessionId, outcome, occurredAt } = event;
    insert.run(eventId, userRef, sessionId, outcome, email.subject, email.body, occurredAt);
  };
}
