/**
 * The number a start texts: the user's own, or, for an action with `destination: 'entered'`, the
 * one typed into the start request (on a restart, the one kept with the finished attempt: nothing
 * the request sends can swap it). Either way the destination policy is checked before anything is
 * sent or stored; a refusal is logged with the number masked and counted by reason.
 */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import { withHookDeadline } from './hook-deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { showWithText } from './answer-error.ts';
import { maskDestination } from '../numbers/mask-number.ts';
import { refusalOf } from '../numbers/destination-policy.ts';
import {
  describeStoredNumber,
  isKnownCountry,
  numbersStartingIt,
  readEnteredNumber,
  readStoredNumber,
  type ReadNumber,
} from '../numbers/parse-number.ts';
import type { ResolvedUser } from '../options/options.ts';
import { ENTERED_NUMBER_FIELD } from '../pages/pages.ts';
import type { Attempt } from '../store/types.ts';
import { countRefusedDestination } from '../telemetry.ts';
import type { ActionDefinition } from '../types.ts';
import { restartedAttempt } from './start-request.ts';

/** The default country for this request: the option's code, or what its function returns (checked). */
async function defaultCountryFor<Tx>(context: KitContext<Tx>, req: Request): Promise<string | undefined> {
  const chooser = context.defaultCountry;
  if (typeof chooser !== 'function') return chooser;
  const country = await withHookDeadline(context, 'defaultCountry', () => chooser(req));
  if (country === undefined || isKnownCountry(country)) return country;
  throw new KitError(
    KitErrorCode.HookFailed,
    "`defaultCountry(req)` returned something other than an ISO 3166-1 alpha-2 code such as 'GB' (or undefined); return one of those.",
  );
}

/** The typed number as E.164 and what the metadata knows of it; a 422 when it cannot be a real number. */
async function enteredNumber<Tx>(context: KitContext<Tx>, req: Request, body: Record<string, unknown>) {
  const typed = body[ENTERED_NUMBER_FIELD];
  const number = readEnteredNumber(typed, await defaultCountryFor(context, req));
  if (number === undefined) {
    throw new KitError(
      KitErrorCode.InvalidPhoneNumber,
      `The start request's \`${ENTERED_NUMBER_FIELD}\` is missing or is not a phone number that can be texted.`,
    );
  }
  return number;
}

/** Refuses what the policy refuses, before any service call; logged masked, counted by reason. */
function police<Tx>(context: KitContext<Tx>, action: ActionDefinition<Tx>, number: ReadNumber, entered: boolean): void {
  const reason = refusalOf(context.destinationPolicy, number);
  if (reason === undefined) return;
  // A national number from the app's records ("07400 123456") names no country: say how to give it.
  const national = !entered && !number.e164.startsWith('+');
  context.logger.warn(
    { route: 'start', action: action.name, destination: maskDestination(number.e164), reason, entered },
    national
      ? "destination refused by the destination policy; nothing was sent: resolveUser(req).destination has no '+' and country code, so it names no country; give your users' numbers in international form (E.164)"
      : 'destination refused by the destination policy; nothing was sent',
  );
  countRefusedDestination(reason, entered);
  // One message whatever the reason: with `errors: 'next'` it reaches the app, which may show it.
  const refused = new KitError(KitErrorCode.PhoneNumberRefused, 'The destination policy refuses this number.');
  // The number the app holds cannot be retyped on the error page: its own text says what can be done.
  throw entered ? refused : showWithText(refused, 'stored_number_refused');
}

/** Who the attempt is for (its destination as texted), and its number as read from the store (undefined for a typed one). */
export interface AttemptUser {
  user: ResolvedUser;
  stored: ReadNumber | undefined;
}

/**
 * Who the attempt is for and where its code goes, policed. `previous` is the finished attempt a
 * restart names (already checked to be this user's, of this action).
 */
export async function attemptUserFor<Tx>(
  context: KitContext<Tx>,
  req: Request,
  action: ActionDefinition<Tx>,
  user: ResolvedUser,
  body: Record<string, unknown>,
  previous: Attempt | undefined,
): Promise<AttemptUser> {
  if (action.destination !== 'entered') {
    // The app's stored number: fictional test ranges must keep working, so it is not required to
    // be valid; what the metadata knows of it (country, type) is policed. One it cannot read at all
    // is of no known country: an allow-list refuses it too. The number policed is the one texted.
    const known = readStoredNumber(user.destination);
    police(context, action, known, false);
    // Digits after a real number may still reach it: a premium-rate number with three more,
    // unreadable as a whole, is judged as what it starts with. Every such start, not only the
    // shortest: "+353 1520 123456" (premium-rate) starts with a Dublin landline, "+353 1 520 1234".
    if (known.type === undefined) {
      for (const start of numbersStartingIt(known.e164)) police(context, action, start, false);
    }
    return { user: { userRef: user.userRef, destination: known.e164 }, stored: known };
  }
  if (previous === undefined) {
    const number = await enteredNumber(context, req, body);
    police(context, action, number, true);
    // Read from what was typed, with a default country: not what describeStoredNumber would read.
    return { user: { userRef: user.userRef, destination: number.e164 }, stored: undefined };
  }
  // A restart texts the number kept with the finished attempt, whatever the request sends.
  const kept = previous.destination === null ? undefined : describeStoredNumber(previous.destination);
  if (kept === undefined) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'That verification cannot be restarted; go back and start again.',
    );
  }
  police(context, action, kept, true);
  return { user: { userRef: user.userRef, destination: kept.e164 }, stored: kept };
}

/**
 * The finished attempt a restart names and who the attempt is for, from the start's fields;
 * 'answered' when `answered` took a typed number that cannot be texted (the number form back),
 * told whether it was a restart's kept number (a new start then, nothing of it shown back).
 */
export async function attemptFor<Tx>(
  context: KitContext<Tx>,
  req: Request,
  action: ActionDefinition<Tx>,
  signedIn: ResolvedUser,
  body: Record<string, unknown>,
  answered: (error: unknown, restarted: boolean) => boolean,
): Promise<{ previous: Attempt | undefined; attemptUser: AttemptUser } | 'answered'> {
  const previous = await restartedAttempt(context, action, signedIn.userRef, body.restart);
  try {
    return { previous, attemptUser: await attemptUserFor(context, req, action, signedIn, body, previous) };
  } catch (error) {
    if (answered(error, previous !== undefined)) return 'answered';
    throw error;
  }
}
