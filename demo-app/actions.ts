/**
 * The demo's three guarded actions. Each `fulfil` runs inside the kit's transaction with its handle
 * (the shared better-sqlite3 Database, synchronously; or the pg client inside BEGIN ... COMMIT), so
 * the effect on the demo's tables and the kit's "fulfilled" mark commit together, exactly once per
 * sessionId.
 *
 * Everything an action needs is decided on the server: `prepare` validates the start request and
 * returns the parameters the kit stores beside the attempt; the browser never sends them again.
 */
import {
  KitError,
  KitErrorCode,
  maskDestination,
  type ActionDefinition,
  type JsonValue,
  type VerifiedAttempt,
} from 'hosted-sms-verify-kit';
import { after, type DemoReads, type DemoWrites } from './data.ts';
import {
  CHANGE_PAYOUT,
  CHANGE_PHONE,
  CHANGE_PHONE_STEP_UP,
  CONFIRM_PHONE,
  maskAccountNumber,
  notConfirmedDetail,
} from './domain.ts';
import { DEMO_TEXTS, demoTexts, type DemoTexts } from './i18n.ts';

/** Account numbers: 8 to 17 digits; spaces and hyphens are ignored. Refusals in the user's language. */
export function normaliseAccountNumber(input: unknown, texts: DemoTexts['account'] = DEMO_TEXTS.en.account): string {
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

function stringParam(params: JsonValue, key: string): string {
  const value = typeof params === 'object' && params !== null && !Array.isArray(params) ? params[key] : undefined;
  if (typeof value !== 'string') throw new Error(`Stored parameters lack "${key}"; refusing to fulfil.`);
  return value;
}

function stringOf(destination: string | null): string {
  if (destination === null) throw new Error('The attempt has no destination; refusing to fulfil.');
  return destination;
}

function paramOf(params: JsonValue): unknown {
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? params.accountNumber : undefined;
}

/** Change phone number: texts the number the user typed; once its code is entered it is the user's number. */
function changePhoneAction(
  writes: DemoWrites,
  now: () => number,
  recordActivity: (tx: unknown, attempt: VerifiedAttempt, detail: string, at: number) => void | Promise<void>,
): ActionDefinition<unknown> {
  return {
    name: CHANGE_PHONE,
    operationSensitivity: 'sensitive',
    successPath: '/verified/phone',
    // The number typed into the form (read with the default country of the user's language) is
    // texted; only its code, never a passkey of another number, can make it the user's number.
    destination: 'entered',
    proves: 'destination',
    // A stolen session cannot move the codes to another phone: the user confirms it's them first (a
    // code to the current number, or their passkey), in this browser, within 10 minutes, whoever posts the start.
    requireRecentVerification: { scope: CHANGE_PHONE_STEP_UP, maxAge: 10 * 60 },
    fulfil(tx, attempt) {
      const phone = stringOf(attempt.destination);
      const at = now();
      return after(writes.changePhone(tx, attempt.userRef, phone, at), (changed) => {
        if (changed !== 1) throw new Error(`User ${attempt.userRef} no longer exists; nothing was changed.`);
        return recordActivity(tx, attempt, `Phone number changed to ${maskDestination(phone)}`, at);
      });
    },
  };
}

export function createDemoActions(
  reads: DemoReads,
  writes: DemoWrites,
  now: () => number = Date.now,
): ActionDefinition<unknown>[] {
  // session_id is demo_activity's primary key: a second fulfilment of one session could never be recorded.
  const recordActivity = (tx: unknown, attempt: VerifiedAttempt, detail: string, at: number) =>
    writes.recordActivity(tx, {
      sessionId: attempt.sessionId,
      userId: attempt.userRef,
      action: attempt.action,
      detail,
      at,
    });

  const confirmPhone: ActionDefinition<unknown> = {
    name: CONFIRM_PHONE,
    operationSensitivity: 'normal',
    successPath: '/verified/phone',
    // Confirming a number must prove the user holds it: a passkey saved while confirming another
    // number never answers for this one (the kit binds the service's userRef to the number).
    proves: 'destination',
    fulfil(tx, attempt) {
      // The number the session was for is the one that becomes verified, whatever the profile says
      // now. (Attempts stored before the kit recorded destinations kept the number in params.)
      const phone = attempt.destination ?? stringParam(attempt.params, 'phone');
      const at = now();
      // Only while it is still the user's number: a confirmation started before a change of number
      // (a tab left open, a verification the sweep settles later) verifies nothing.
      return after(writes.confirmPhone(tx, attempt.userRef, phone, at), (done) => {
        if (done === 'no_user') throw new Error(`User ${attempt.userRef} no longer exists; nothing was changed.`);
        const masked = maskDestination(phone);
        const detail = done === 'confirmed' ? `Confirmed ${masked}` : notConfirmedDetail(masked);
        return recordActivity(tx, attempt, detail, at);
      });
    },
  };

  const changePayout: ActionDefinition<unknown> = {
    name: CHANGE_PAYOUT,
    operationSensitivity: 'sensitive',
    successPath: '/verified/payout',
    async prepare(req, { user, restartParams }) {
      // A restart checks the earlier attempt's account again, for the user as they are now.
      const form = (req.body ?? {}) as Record<string, unknown>;
      const given = restartParams === undefined ? form.accountNumber : paramOf(restartParams);
      const texts = demoTexts(req).account;
      const accountNumber = normaliseAccountNumber(given, texts);
      if ((await reads.payoutAccount(user.userRef))?.accountNumber === accountNumber) {
        throw new KitError(KitErrorCode.InvalidActionParams, texts.same);
      }
      return { accountNumber };
    },
    fulfil(tx, attempt) {
      const accountNumber = normaliseAccountNumber(stringParam(attempt.params, 'accountNumber'));
      const at = now();
      return after(writes.setPayout(tx, attempt.userRef, accountNumber, at, attempt.sessionId), () =>
        recordActivity(tx, attempt, `Payout account set to ${maskAccountNumber(accountNumber)}`, at),
      );
    },
  };

  return [confirmPhone, changePayout, changePhoneAction(writes, now, recordActivity)];
}
