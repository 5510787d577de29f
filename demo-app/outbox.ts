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
import { CHANGE_PAYOUT, CHANGE_PHONE, CONFIRM_PHONE, confirmedNothing, maskAccountNumber } from './domain.ts';

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

/** What the user was doing, as the emails name it: each guarded action, and any step-up (confirm it's you). */
function doing(event: OutcomeEvent): string {
  switch (event.action) {
    case CHANGE_PAYOUT:
      return `changing your payout account to ${maskedAccount(event)}`;
    case CONFIRM_PHONE:
      return 'confirming your phone number';
    case CHANGE_PHONE:
      return 'changing your phone number';
    default:
      return 'confirming it’s you';
  }
}

/**
 * The email of a fulfilled verification: what changed, or that the user confirmed it's them. Never
 * "with a code": the hosted page may have taken a passkey instead, and the service does not say.
 */
function fulfilledEmail(event: OutcomeEvent, applied: string | undefined): OutboxEmail {
  const number = event.destination ?? 'your number';
  switch (event.action) {
    case CHANGE_PAYOUT: {
      const body = `Payouts now go to the account ending ${maskedAccount(event).slice(-4)}. If this was not you, contact us.`;
      return { subject: 'Your payout account was changed', body };
    }
    case CONFIRM_PHONE:
      // Fulfilled after a change of number, it confirmed nothing (Activity says why).
      return applied !== undefined && confirmedNothing(applied)
        ? {
            subject: 'Your phone number was not confirmed',
            body: `${number} is no longer your number, so nothing was changed.`,
          }
        : { subject: 'Phone number confirmed', body: `You confirmed ${number}.` };
    case CHANGE_PHONE:
      return {
        subject: 'Your phone number was changed',
        body: `Codes now go to ${number}. If this was not you, contact us.`,
      };
    default:
      return { subject: 'You confirmed it’s you', body: 'You confirmed it’s you. If this was not you, contact us.' };
  }
}

/**
 * The email text for an outcome (no secret, no handoff: only what the user already knows). `applied`:
 * what the action's fulfil recorded in Activity for this session, if anything.
 */
export function emailFor(event: OutcomeEvent, applied?: string): OutboxEmail {
  const what = doing(event);
  switch (event.outcome) {
    case 'fulfilled':
      return fulfilledEmail(event, applied);
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
  // Read after the commit: what the fulfil recorded decides what the email may say.
  const applied = db.prepare('SELECT detail FROM demo_activity WHERE session_id = ?');
  return (event) => {
    const email = emailFor(event, (applied.get(event.sessionId) as { detail: string } | undefined)?.detail);
    const { eventId, userRef, sessionId, outcome, occurredAt } = event;
    insert.run(eventId, userRef, sessionId, outcome, email.subject, email.body, occurredAt);
  };
}
