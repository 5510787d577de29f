/**
 * The demo's two guarded actions. Each `fulfil` runs synchronously inside the kit's SQLite
 * transaction (`tx` is the shared better-sqlite3 Database), so the effect on the demo's tables and
 * the kit's "fulfilled" mark commit together, exactly once per sessionId.
 *
 * Everything an action needs is decided on the server: `prepare` validates the start request and
 * returns the parameters the kit stores beside the attempt; the browser never sends them again.
 */
import type { Database } from 'better-sqlite3';
import { KitError, KitErrorCode, type ActionDefinition, type JsonValue, type VerifiedAttempt } from 'hosted-sms-verify-kit';
import type { DemoQueries } from './db.ts';
import { DEMO_TEXTS, demoTexts, type DemoTexts } from './i18n.ts';

export const CONFIRM_PHONE = 'confirm_phone';
export const CHANGE_PAYOUT = 'change_payout';

export const ACTION_LABELS: Record<string, string> = {
  [CONFIRM_PHONE]: 'Confirmed phone number',
  [CHANGE_PAYOUT]: 'Changed payout account',
};

/** Account numbers: 8 to 17 digits; spaces and hyphens are ignored. Refusals in the user's language. */
export function normaliseAccountNumber(
  input: unknown,
  texts: DemoTexts['account'] = DEMO_TEXTS.en.account,
): string {
  if (typeof input !== 'string') {
    throw new KitError(KitErrorCode.InvalidActionParams, texts.missing);
  }
  if (input.length > 64) {
    throw new KitError(KitErrorCode.InvalidActionParams, texts.tooLong);
  }
  const digits = input.replace(/[\s-]/g, '');
  if (!/^\d{8,17}$/.test(digits)) {
    throw new KitError(KitErrorCode.InvalidActionParams, texts.digits);
  }
  return digits;
}

/** ••••1234: pages and activity never show a whole account number. */
export function maskAccountNumber(accountNumber: string): string {
  return `••••${accountNumber.slice(-4)}`;
}

function stringParam(params: JsonValue, key: string): string {
  const value = typeof params === 'object' && params !== null && !Array.isArray(params) ? params[key] : undefined;
  if (typeof value !== 'string') throw new Error(`Stored parameters lack "${key}"; refusing to fulfil.`);
  return value;
}

function paramOf(params: JsonValue): unknown {
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? params.accountNumber : undefined;
}

function recordActivity(tx: Database, attempt: VerifiedAttempt, detail: string, at: number): void {
  // session_id is the primary key: a second fulfilment of one session could never be recorded.
  tx.prepare('INSERT INTO demo_activity (session_id, user_id, action, detail, at) VALUES (?, ?, ?, ?, ?)').run(
    attempt.sessionId,
    attempt.userRef,
    attempt.action,
    detail,
    at,
  );
}

export function createDemoActions(queries: DemoQueries, now: () => number = Date.now): ActionDefinition<Database>[] {
  const confirmPhone: ActionDefinition<Database> = {
    name: CONFIRM_PHONE,
    operationSensitivity: 'normal',
    successPath: '/verified/phone',
    fulfil(tx, attempt) {
      // The number the code was sent to is the one that becomes verified, whatever the profile says
      // now. (Attempts stored before the kit recorded destinations kept the number in params.)
      const phone = attempt.destination ?? stringParam(attempt.params, 'phone');
      const at = now();
      const changed = tx
        .prepare('UPDATE demo_users SET verified_phone = ?, phone_verified_at = ? WHERE id = ?')
        .run(phone, at, attempt.userRef).changes;
      if (changed !== 1) throw new Error(`User ${attempt.userRef} no longer exists; nothing was changed.`);
      recordActivity(tx, attempt, `Confirmed ${phone}`, at);
    },
  };

  const changePayout: ActionDefinition<Database> = {
    name: CHANGE_PAYOUT,
    operationSensitivity: 'sensitive',
    successPath: '/verified/payout',
    prepare(req, { user, restartParams }) {
      // A restart checks the earlier attempt's account again, for the user as they are now.
      const form = (req.body ?? {}) as Record<string, unknown>;
      const given = restartParams === undefined ? form.accountNumber : paramOf(restartParams);
      const texts = demoTexts(req).account;
      const accountNumber = normaliseAccountNumber(given, texts);
      if (queries.payoutAccount(user.userRef)?.accountNumber === accountNumber) {
        throw new KitError(KitErrorCode.InvalidActionParams, texts.same);
      }
      return { accountNumber };
    },
    fulfil(tx, attempt) {
      const accountNumber = normaliseAccountNumber(stringParam(attempt.params, 'accountNumber'));
      const at = now();
      tx.prepare(
        `INSERT INTO demo_payout_accounts (user_id, account_number, changed_at, session_id) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET account_number = excluded.account_number, changed_at = excluded.changed_at, session_id = excluded.session_id`,
      ).run(attempt.userRef, accountNumber, at, attempt.sessionId);
      recordActivity(tx, attempt, `Payout account set to ${maskAccountNumber(accountNumber)}`, at);
    },
  };

  return [confirmPhone, changePayout];
}
