/**
 * The after-commit outcome hook, for side effects that cannot run inside the fulfil transaction
 * (an email, analytics, another service).
 *
 * A transactional outbox: the store writes one event row in the same transaction that records an
 * outcome (fulfilled, failed, expired, superseded), so an outcome never exists without its event.
 * After commit the event is delivered to `onOutcome` without holding up the user's response;
 * success marks it delivered. A throw, a hook late past its deadline (`hookTimeouts.onOutcome`), or
 * a crash between commit and delivery, leaves it
 * undelivered: the sweep delivers it later, leased so two sweepers do not both call the hook at
 * once. The contract is AT LEAST once: deduplicate on `eventId` when that matters.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FulfilContext } from '../context.ts';
import type { StoredOutcomeEvent, VerifyStore } from '../store/types.ts';
import { DEFAULT_HOOK_TIMEOUTS, withDeadline } from '../deadline.ts';
import { describeError, lateRejectionLogger, markingErrors } from '../logger.ts';
import { maskDestination } from '../numbers/mask-number.ts';
import { eventParamsOf } from '../step-up/scope-event.ts';
import type { OutcomeEvent, OutcomeHook } from '../types.ts';

/** What delivery reads of the kit's context. */
export type OutcomeDeliveryDeps = Pick<FulfilContext, 'onOutcome' | 'now' | 'logger' | 'hookTimeouts'> & {
  store: Pick<VerifyStore<unknown>, 'claimOutcomeEvents' | 'markOutcomeEventDelivered' | 'retryOutcomeEvent'>;
};

export interface DeliveryOptions {
  owner: string;
  /** How long a claimed event is this owner's before another may deliver it again. */
  leaseMs: number;
  /** Events claimed per store call. */
  limit: number;
  /** Only these events (a request delivering what it just recorded). */
  eventIds?: readonly string[];
  /** Stop claiming more once this returns true (the sweep's time budget, a stop signal). */
  shouldStop?: () => boolean;
}

/** Delays before re-delivering after a failed delivery, by deliveries so far; the last repeats. */
export const OUTCOME_RETRY_MS: readonly number[] = [10_000, 30_000, 60_000, 300_000, 1_800_000];

/** The lease of a delivery made right after a request: long enough for a slow hook. */
const AFTER_RESPONSE_LEASE_MS = 60_000;

function toEvent(stored: StoredOutcomeEvent): OutcomeEvent {
  const { attempt } = stored;
  return {
    eventId: stored.eventId,
    outcome: stored.outcome,
    source: stored.source,
    sessionId: attempt.sessionId,
    userRef: attempt.userRef,
    action: attempt.action,
    // A step-up scope's guarded path and resource may name a number too: masked as the destination.
    params: eventParamsOf(attempt.params),
    // Events travel to logs and queues: the number masked (fulfil had the full one).
    destination: attempt.destination === null ? null : maskDestination(attempt.destination),
    reason: attempt.failureReason,
    supersededBy: attempt.supersededBy,
    occurredAt: stored.occurredAt,
    delivery: stored.deliveries,
  };
}

/**
 * Claims due (or the given) undelivered events and hands each to the hook, a claimed batch at once,
 * each under its deadline: one user's stuck hook never holds up the others' deliveries.
 */
export async function deliverOutcomeEvents(
  deps: OutcomeDeliveryDeps,
  options: DeliveryOptions,
): Promise<{ delivered: number; failed: number }> {
  const counts = { delivered: 0, failed: 0 };
  const hook = deps.onOutcome;
  if (hook === undefined) return counts;
  for (;;) {
    if (options.shouldStop?.() === true) return counts;
    const claimed = await deps.store.claimOutcomeEvents({
      now: deps.now(),
      owner: options.owner,
      leaseMs: options.leaseMs,
      limit: options.limit,
      ...(options.eventIds === undefined ? {} : { eventIds: options.eventIds }),
    });
    const deadlineMs = deps.hookTimeouts?.onOutcome ?? DEFAULT_HOOK_TIMEOUTS.onOutcome;
    const results = await Promise.all(
      claimed.map((stored) => deliverOne(deps, hook, stored, options.owner, deadlineMs)),
    );
    for (const delivered of results) counts[delivered ? 'delivered' : 'failed']++;
    if (options.eventIds !== undefined || claimed.length < options.limit) return counts;
  }
}

/** One event to the hook; true when it acknowledged in time (then marked delivered), else retried later. */
async function deliverOne(
  deps: OutcomeDeliveryDeps,
  hook: OutcomeHook,
  stored: StoredOutcomeEvent,
  owner: string,
  deadlineMs: number,
): Promise<boolean> {
  const event = toEvent(stored);
  try {
    // A KitError the hook throws is in the integrator's words (it may name the number): logged masked.
    await withDeadline('onOutcome', deadlineMs, () => markingErrors(() => hook(event)), {
      onLateRejection: deps.logger && lateRejectionLogger(deps.logger),
    });
  } catch (error) {
    // Never undefined: a claimed event has at least one delivery.
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
    const delay = OUTCOME_RETRY_MS[Math.min(stored.deliveries - 1, OUTCOME_RETRY_MS.length - 1)]!;
    const nextAttemptAt = deps.now() + delay;
    deps.logger?.warn(
      {
        eventId: stored.eventId,
        sessionId: stored.attempt.sessionId,
        outcome: stored.outcome,
        nextAttemptAt,
        err: describeError(error),
      },
      'onOutcome failed; the event is delivered again later',
    );
    await deps.store.retryOutcomeEvent(stored.eventId, owner, nextAttemptAt);
    return false;
  }
  // The stored id, not the event's: the hook may have changed the object it was given.
  await deps.store.markOutcomeEventDelivered(stored.eventId, owner, deps.now());
  return true;
}

/**
 * Delivers what a request just recorded once its response is finished ("never delaying the
 * user's redirect"): on the response's 'close' (after the last byte went out, or the client left;
 * express-session may still be saving when the handler returns), never awaited. Anything that
 * fails here is left undelivered for the sweep.
 */
export function deliverAfterResponse(
  deps: OutcomeDeliveryDeps,
  eventIds: readonly string[],
  response: { once(event: 'close', listener: () => void): unknown },
): void {
  if (deps.onOutcome === undefined || eventIds.length === 0) return;
  response.once('close', () => {
    const owner = `${hostname()}:${process.pid}:request:${randomBytes(4).toString('hex')}`;
    const delivery = { owner, leaseMs: AFTER_RESPONSE_LEASE_MS, limit: eventIds.length, eventIds };
    deliverOutcomeEvents(deps, delivery).catch((error: unknown) => {
      const message = 'outcome events could not be delivered now; the sweep will';
      deps.logger?.error({ err: describeError(error) }, message);
    });
  });
}
