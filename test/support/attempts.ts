/**
 * One NewAttempt for store tests: the n-th of a user's payout changes; override what a test is about.
 * Also the two single-attempt calls store tests make, built on the store contract's batched ones
 * (the kit only ever calls those): fulfilOnce and scheduleNextCheck.
 */
import { onlySettlement } from '../../middleware/store/batch.ts';
import type {
  Attempt,
  FulfilEffect,
  FulfilOnceOptions,
  FulfilOnceResult,
  NewAttempt,
  VerifyStore,
} from '../../middleware/store/types.ts';

export function newAttempt(n: number, overrides: Partial<NewAttempt> = {}): NewAttempt {
  return {
    state: `state-${n}`,
    sessionId: `session-${n}`,
    userRef: 'user-a',
    action: 'change_payout',
    params: { n },
    destination: '+15550100001',
    returnTo: '/done',
    sensitivity: 'sensitive',
    platform: 'web',
    createdAt: 1_000_000,
    nextCheckAt: 1_000_000,
    ...overrides,
  };
}

/**
 * The attempt as a caller of fulfilBatch holds it: read back from the store (by its session id),
 * or, for a session the store never had, the attempt a caller would have made up.
 */
export async function storedAttempt(
  store: Pick<VerifyStore<unknown>, 'findAttemptBySessionId'>,
  sessionId: string,
): Promise<Attempt> {
  const stored = await store.findAttemptBySessionId(sessionId);
  if (stored !== undefined) return stored;
  const made = newAttempt(0, { sessionId, state: `state-of-${sessionId}` });
  return {
    ...made,
    serviceUserRef: made.serviceUserRef ?? null,
    clientId: made.clientId ?? null,
    startSeq: 0,
    outcome: 'pending',
    failureReason: null,
    fulfilledAt: null,
    finishedAt: null,
    sweepChecks: 0,
    supersededBy: null,
  };
}

/**
 * One fulfilment in its own transaction: the store's fulfilBatch with a batch of one, as the
 * landing makes it. Resolves with its result; rejects with what its effect threw.
 */
export async function fulfilOnce<Tx>(
  store: Pick<VerifyStore<Tx>, 'fulfilBatch'>,
  attempt: Attempt,
  effect: FulfilEffect<Tx>,
  now: number,
  options: FulfilOnceOptions = {},
): Promise<FulfilOnceResult> {
  return onlySettlement(await store.fulfilBatch([{ attempt, effect, now, options }]));
}

/** One attempt's next check, through the store's batched scheduleNextChecks. */
export function scheduleNextCheck(
  store: Pick<VerifyStore<unknown>, 'scheduleNextChecks'>,
  sessionId: string,
  owner: string,
  nextCheckAt: number,
): Promise<void> {
  return store.scheduleNextChecks(owner, [{ sessionId, nextCheckAt }]);
}
