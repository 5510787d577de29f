/**
 * The read half of the one fulfil path (fulfil.ts): what is stored already settles an attempt, or
 * the service's answer, checked against what was stored for it. Writes nothing.
 */
import { KitError, KitErrorCode } from '../errors.ts';
import type { FulfilContext } from '../context.ts';
import type { Attempt } from '../store/types.ts';
import type { ActionDefinition, SessionStatus } from '../types.ts';
import { reasonOf } from '../client/client.ts';
import { countsTexts } from './count-verified.ts';

export type Completion =
  /** `firstTime` is true only for the caller whose transaction ran the action. */
  (
    | { kind: 'fulfilled'; attempt: Attempt; firstTime: boolean }
    | { kind: 'failed'; attempt: Attempt; reason: string }
    | { kind: 'pending'; attempt: Attempt }
    | { kind: 'expired'; attempt: Attempt }
    /** Never applied: a newer attempt of the same user and action was (attempt.supersededBy). */
    | { kind: 'superseded'; attempt: Attempt }
  ) & {
    /** Outcome events this call recorded (deliver them after the response: deliverAfterResponse). */
    eventIds: readonly string[];
  };

/** What a status read found: what is stored already settles it, or the service's answer, checked. */
export type StatusRead<Tx> =
  /** `textVerified`: a superseded attempt whose user verified its text all the same (never applied). */
  | { kind: 'settled'; completion: Completion; textVerified?: boolean }
  | { kind: 'pending' }
  | { kind: 'failed'; reason: string }
  /**
   * Verified, with the echoed state and userRef equal to the stored ones. `action` is undefined
   * when it is no longer registered: the text is counted verified, nothing is fulfilled.
   */
  | { kind: 'verified'; action: ActionDefinition<Tx> | undefined };

/**
 * The read half of completeAttempt: the session's status from the service. Writes nothing; throws
 * when the service's answer does not match the attempt. A superseded attempt is read only for the
 * SMS pumping rules (supersededTextVerified).
 * An attempt started under another client id is not read: the service answers `pending` for
 * another client's sessions whatever happened, so the read would only spend the service's limit.
 */
export async function readStatus<Tx>(deps: FulfilContext<Tx>, attempt: Attempt): Promise<StatusRead<Tx>> {
  const settled = settledCompletion(attempt);
  if (settled?.kind === 'superseded') {
    return { kind: 'settled', completion: settled, textVerified: await supersededTextVerified(deps, attempt) };
  }
  if (settled !== undefined) return { kind: 'settled', completion: settled };
  if (startedByAnotherClient(deps, attempt)) {
    logNotRead(deps, attempt);
    return { kind: 'pending' };
  }
  // A ready client is the app's code: its answer is checked as the kit's own client checks the service's.
  const status: Partial<SessionStatus> | undefined = await deps.client.getSession(attempt.sessionId);
  if (status?.status === 'pending') return { kind: 'pending' };
  if (status?.status === 'failed') {
    // Another session's failure must not end this attempt: its user may have verified.
    if (echoContradicts(status, attempt)) throw mismatchedAnswer();
    return { kind: 'failed', reason: reasonOf(status.reason) };
  }
  if (status?.status !== 'verified') {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'The verification client answered a status other than pending, verified or failed; nothing was fulfilled.',
    );
  }
  if (!echoesAttempt(status, attempt)) throw mismatchedAnswer();
  return { kind: 'verified', action: deps.actions.get(attempt.action) };
}

function mismatchedAnswer(): KitError {
  return new KitError(
    KitErrorCode.ServiceResponseMismatch,
    'The verification service reported a state or user other than the ones this attempt was started with; nothing was fulfilled or recorded.',
  );
}

/** The userRef the service was sent for the attempt: bound to the number for an action that proves it, else the user's. */
function sentUserRef(attempt: Attempt): string {
  return attempt.serviceUserRef ?? attempt.userRef;
}

/** The echoed state and userRef are the attempt's. */
function echoesAttempt(status: Partial<SessionStatus>, attempt: Attempt): boolean {
  return status.state === attempt.state && status.userRef === sentUserRef(attempt);
}

/**
 * A failure echoing a state or userRef other than the attempt's. One echoing none is taken as the
 * attempt's (a ready client of the app's may leave them out, as its type allows).
 */
function echoContradicts(status: Partial<SessionStatus>, attempt: Attempt): boolean {
  return (
    (status.state !== undefined && status.state !== attempt.state) ||
    (status.userRef !== undefined && status.userRef !== sentUserRef(attempt))
  );
}

/**
 * Superseded attempts whose verified text this process counted: a reload of their landing reads
 * the service no more (each read costs the integrator; a verified answer is never reused).
 * Bounded: emptied past SUPERSEDED_COUNTED_KEPT.
 */
const supersededCounted = new Set<string>();
const SUPERSEDED_COUNTED_KEPT = 10_000;

export function noteSupersededCounted(sessionId: string): void {
  if (supersededCounted.size >= SUPERSEDED_COUNTED_KEPT) supersededCounted.clear();
  supersededCounted.add(sessionId);
}

/**
 * Whether a superseded attempt's text was verified all the same (its user finished it after a
 * newer attempt was applied): a real user's text, counted for the SMS pumping rules, never applied.
 * Read only with the rules counting; a read that fails, or is not the attempt's, counts nothing.
 */
async function supersededTextVerified<Tx>(deps: FulfilContext<Tx>, attempt: Attempt): Promise<boolean> {
  if (!countsTexts(deps) || startedByAnotherClient(deps, attempt) || supersededCounted.has(attempt.sessionId)) {
    return false;
  }
  try {
    const status: Partial<SessionStatus> | undefined = await deps.client.getSession(attempt.sessionId);
    return status?.status === 'verified' && echoesAttempt(status, attempt);
  } catch {
    return false;
  }
}

/**
 * True when the attempt records a client id other than this kit's: only that client can read its
 * session, so nothing this kit reads or waits for can settle it.
 */
export function startedByAnotherClient(deps: { clientId?: string }, attempt: Pick<Attempt, 'clientId'>): boolean {
  return attempt.clientId !== null && deps.clientId !== undefined && attempt.clientId !== deps.clientId;
}

function logNotRead<Tx>(deps: FulfilContext<Tx>, attempt: Attempt): void {
  deps.logger?.warn(
    { sessionId: attempt.sessionId, action: attempt.action, startedWithClientId: attempt.clientId },
    'verification not read: it was started under another client id, and the service answers pending for ' +
      "another client's sessions; a kit with that client id, or the expiry after 24 h, settles it",
  );
}

/** The completion an attempt already has in the store, if it is no longer pending. */
export function settledCompletion(attempt: Attempt): Completion | undefined {
  switch (attempt.outcome) {
    case 'fulfilled':
      return { kind: 'fulfilled', attempt, firstTime: false, eventIds: [] };
    case 'failed':
      return { kind: 'failed', attempt, reason: attempt.failureReason ?? 'unknown', eventIds: [] };
    case 'expired':
      return { kind: 'expired', attempt, eventIds: [] };
    case 'superseded':
      return { kind: 'superseded', attempt, eventIds: [] };
    case 'pending':
      return undefined;
  }
}
