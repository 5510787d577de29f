/**
 * One sweep run: fulfils attempts whose user verified but never came back (the spec: "run a periodic
 * sweep over unfinished pending records ... for users whose browser never returned").
 *
 * A run first marks attempts older than the 24 h window expired (they are never read again), then
 * claims due attempts in batches (a leased, conditional claim in the store, safe across processes),
 * reads each status with bounded concurrency through `completeAttempt` (THE fulfil path shared with
 * the landing), and reschedules what is still pending with backoff. Service errors never mark
 * anything: the attempt is rescheduled and read again by a later run.
 *
 * Last, it delivers outcome events the onOutcome hook has not acknowledged yet (a hook that threw,
 * or a process that died between commit and delivery), leased like claims.
 *
 * Work is bounded per run (batch size, concurrency, time budget), and at most one batch is held
 * in memory at a time, so memory does not grow with the number of unfinished attempts.
 */
import { performance } from 'node:perf_hooks';
import { KitError, KitErrorCode } from './errors.ts';
import type { FulfilContext } from './context.ts';
import { completeAttempt } from './fulfil.ts';
import { deliverOutcomeEvents } from './outcomes.ts';
import { describeError as describe, safeLogger } from './logger.ts';
import { applyRetention } from './retention.ts';
import {
  DEFAULT_SWEEP_BACKOFF_MS,
  resolveSweepOptions,
  SWEEP_WINDOW_MS,
  type ResolvedSweepOptions,
  type SweepOptions,
} from './sweep-options.ts';
import type { Attempt } from './store/types.ts';
import { countOutcomes, inSpan, recordSweepLag, SpanName } from './telemetry.ts';

/** What a run needs: the same dependencies as the landing's fulfil path. */
export type SweepDeps<Tx = unknown> = FulfilContext<Tx>;

/** What one sweep run did. */
export interface SweepReport {
  owner: string;
  /** Attempts claimed by this run. */
  claimed: number;
  /** Status reads made (each claimed attempt is read at most once per run). */
  reads: number;
  /** Attempts whose action this run performed. */
  fulfilled: number;
  /** Attempts a landing (or another worker) fulfilled between the claim and the read. */
  alreadyFulfilled: number;
  /** Attempts the service reported failed; the reason was recorded. */
  failed: number;
  /** Attempts still pending, rescheduled with backoff. */
  pending: number;
  /** Attempts marked expired (past the 24 h window; never read). */
  expired: number;
  /**
   * Verified attempts not applied because a newer attempt of the same user and action already was
   * (counted when this run found them; older pending ones settled by a fulfilment are not counted).
   */
  superseded: number;
  /** Outcome events delivered to onOutcome by this run. */
  outcomesDelivered: number;
  /** Deliveries to onOutcome that threw; those events are delivered again by a later run. */
  outcomeDeliveryErrors: number;
  /** Reads or fulfilments that failed; the attempts were rescheduled, nothing was marked. */
  errors: number;
  /** Claimed attempts not started because the run was stopped or ran out of time (released). */
  released: number;
  durationMs: number;
  /**
   * False when at least one read was made and none got a usable answer from the service
   * (every one failed as service_unavailable, service_protocol_error or service_rejected).
   */
  serviceReachable: boolean;
  /** Why the run ended before the due work was exhausted, if it did. */
  stoppedBy: 'signal' | 'time_budget' | null;
  /** How overdue the most overdue attempt this run claimed was (0 when none was due): the sweep's lag. */
  oldestDueAgeMs: number;
  /** Settled attempts whose params and destination retention removed in this run. */
  redacted: number;
  /** Settled attempts retention deleted in this run. */
  deleted: number;
}

/**
 * When to read a still-pending attempt next: `now` + the backoff for the reads made so far, but
 * never past the 24 h window. When the next read would fall outside the window, one last read is
 * placed a minute before its end; after that the attempt gets the window's end, where it is no
 * longer claimable and the next run marks it expired.
 */
export function computeNextCheckAt(
  attempt: Pick<Attempt, 'createdAt' | 'sweepChecks'>,
  now: number,
  backoffMs: readonly number[] = DEFAULT_SWEEP_BACKOFF_MS,
): number {
  // Never undefined: the default backoff is a non-empty constant.
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
  const delay = backoffMs[Math.min(attempt.sweepChecks, backoffMs.length - 1)] ?? DEFAULT_SWEEP_BACKOFF_MS.at(-1)!;
  const windowEnd = attempt.createdAt + SWEEP_WINDOW_MS;
  const lastRead = windowEnd - 60_000;
  const next = now + delay;
  if (next <= lastRead) return next;
  return now < lastRead ? lastRead : windowEnd;
}

/** Errors worth retrying soon: the service was unreachable or answered garbage. */
const TRANSIENT: ReadonlySet<string> = new Set([KitErrorCode.ServiceUnavailable, KitErrorCode.ServiceProtocolError]);

/** Errors that mean the read got no usable answer from the service. */
const UNANSWERED: ReadonlySet<string> = new Set([
  KitErrorCode.ServiceUnavailable,
  KitErrorCode.ServiceProtocolError,
  KitErrorCode.ServiceRejected,
]);

/** Runs one sweep. Rejects only when the store itself fails (claim or expiry). */
export async function runSweep<Tx>(deps: SweepDeps<Tx>, options: SweepOptions = {}): Promise<SweepReport> {
  const opts = resolveSweepOptions(options);
  return inSpan(SpanName.Sweep, { 'verify_kit.sweep.owner': opts.owner }, async (span) => {
    const report = await sweepOnce(deps, opts, options);
    const { claimed, fulfilled, failed, pending, expired, superseded, errors, oldestDueAgeMs } = report;
    span.setAttributes({
      'verify_kit.sweep.claimed': claimed,
      'verify_kit.sweep.fulfilled': fulfilled,
      'verify_kit.sweep.failed': failed,
      'verify_kit.sweep.pending': pending,
      'verify_kit.sweep.expired': expired,
      'verify_kit.sweep.superseded': superseded,
      'verify_kit.sweep.outcomes_delivered': report.outcomesDelivered,
      'verify_kit.sweep.outcome_delivery_errors': report.outcomeDeliveryErrors,
      'verify_kit.sweep.errors': errors,
    });
    recordSweepLag(oldestDueAgeMs);
    return report;
  });
}

async function sweepOnce<Tx>(
  deps: SweepDeps<Tx>,
  opts: ResolvedSweepOptions,
  options: SweepOptions,
): Promise<SweepReport> {
  const { store, now } = deps;
  const logger = safeLogger(options.logger);
  const signal = options.signal;
  const startedAt = performance.now();
  const deadline = startedAt + opts.timeBudgetMs;

  const report: SweepReport = {
    owner: opts.owner,
    claimed: 0,
    reads: 0,
    fulfilled: 0,
    alreadyFulfilled: 0,
    failed: 0,
    pending: 0,
    expired: 0,
    superseded: 0,
    outcomesDelivered: 0,
    outcomeDeliveryErrors: 0,
    errors: 0,
    released: 0,
    durationMs: 0,
    serviceReachable: true,
    stoppedBy: null,
    oldestDueAgeMs: 0,
    redacted: 0,
    deleted: 0,
  };
  let unreachableReads = 0;
  let tooOld = 0;

  const stopReason = (): SweepReport['stoppedBy'] => {
    if (signal?.aborted) return 'signal';
    if (performance.now() >= deadline) return 'time_budget';
    return null;
  };

  const fulfilDeps: SweepDeps<Tx> = deps.logger === undefined && logger !== undefined ? { ...deps, logger } : deps;
  const event = deps.onOutcome === undefined ? undefined : { source: 'sweep' as const };
  report.expired += countExpired(await store.expireAttempts(now(), SWEEP_WINDOW_MS, event));
  Object.assign(report, await applyRetention(store, now(), opts.retention));

  // The batch being worked through; refilled (one claim at a time) only when it is empty.
  let buffer: Attempt[] = [];
  let exhausted = false;
  let claiming: Promise<void> | undefined;

  const claimNext = async (): Promise<void> => {
    const claimedAt = now();
    const batch = await store.claimDueAttempts({
      now: claimedAt,
      maxAgeMs: SWEEP_WINDOW_MS,
      limit: opts.batchSize,
      leaseMs: opts.leaseMs,
      owner: opts.owner,
      ...(deps.platform === undefined ? {} : { platform: deps.platform }),
    });
    // Claims come most overdue first, so the run's first claim holds its oldest due attempt.
    if (report.claimed === 0 && batch[0] !== undefined) report.oldestDueAgeMs = claimedAt - batch[0].nextCheckAt;
    report.claimed += batch.length;
    if (batch.length < opts.batchSize) exhausted = true;
    // RETURNING gives rows in table order, not the claim's ORDER BY: sort so pop() takes the most overdue first.
    buffer = batch.sort((a, b) => b.nextCheckAt - a.nextCheckAt);
  };

  /** The next attempt to read, claiming a batch when needed; undefined when the run is done. */
  const take = async (): Promise<Attempt | undefined> => {
    for (;;) {
      const reason = stopReason();
      if (reason !== null) {
        report.stoppedBy = reason;
        return undefined;
      }
      const next = buffer.pop();
      if (next !== undefined) return next;
      if (exhausted) return undefined;
      claiming ??= claimNext().finally(() => {
        claiming = undefined;
      });
      await claiming;
    }
  };

  const reschedule = async (attempt: Attempt, nextCheckAt: number): Promise<void> => {
    try {
      await store.scheduleNextCheck(attempt.sessionId, opts.owner, nextCheckAt);
    } catch (error) {
      // The lease lapses on its own; the attempt is not lost.
      report.errors++;
      logger?.error({ sessionId: attempt.sessionId, err: describe(error) }, 'sweep: could not reschedule an attempt');
    }
  };

  const check = async (attempt: Attempt): Promise<void> => {
    const current = now();
    if (attempt.createdAt <= current - SWEEP_WINDOW_MS) {
      // Crossed the 24 h line since the claim: never read it; expiry below marks it.
      tooOld++;
      await reschedule(attempt, attempt.createdAt + SWEEP_WINDOW_MS);
      return;
    }
    report.reads++;
    try {
      const completion = await completeAttempt(fulfilDeps, attempt, 'sweep');
      switch (completion.kind) {
        case 'fulfilled':
          if (completion.firstTime) report.fulfilled++;
          else report.alreadyFulfilled++;
          return;
        case 'failed':
          report.failed++;
          return;
        case 'expired':
          report.expired++;
          return;
        case 'superseded':
          report.superseded++;
          return;
        case 'pending':
          report.pending++;
          await reschedule(attempt, computeNextCheckAt(attempt, now(), opts.backoffMs));
          return;
      }
    } catch (error) {
      report.errors++;
      const code = error instanceof KitError ? error.code : undefined;
      if (code !== undefined && UNANSWERED.has(code)) unreachableReads++;
      const transient = code === undefined || TRANSIENT.has(code);
      // Transient: read again soon. Persistent (mismatch, action failed, unknown action): back off.
      const at = transient
        ? Math.min(now() + opts.errorRetryMs, computeNextCheckAt(attempt, now(), opts.backoffMs))
        : computeNextCheckAt(attempt, now(), opts.backoffMs);
      logger?.[transient ? 'warn' : 'error'](
        { sessionId: attempt.sessionId, err: describe(error), nextCheckAt: at },
        'sweep: status check failed; the attempt stays pending and is read again later',
      );
      await reschedule(attempt, at);
    }
  };

  const workers = Array.from({ length: opts.concurrency }, async () => {
    for (let attempt = await take(); attempt !== undefined; attempt = await take()) await check(attempt);
  });
  // allSettled: if a claim fails, the other workers' in-flight reads still finish before we return.
  const settled = await Promise.allSettled(workers);
  try {
    const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  } finally {
    if (buffer.length > 0) {
      // Stopped or out of time with claimed attempts not started: hand them back now.
      report.released = buffer.length;
      buffer = [];
      try {
        await store.releaseClaims(opts.owner);
      } catch (error) {
        logger?.error({ err: describe(error) }, 'sweep: could not release claims; they lapse with the lease');
      }
    }
  }
  if (tooOld > 0) report.expired += countExpired(await store.expireAttempts(now(), SWEEP_WINDOW_MS, event));

  // At least once: whatever onOutcome has not acknowledged (this run's outcomes included).
  const delivery = await deliverOutcomeEvents(fulfilDeps, {
    owner: opts.owner,
    leaseMs: opts.leaseMs,
    limit: opts.batchSize,
    shouldStop: () => stopReason() !== null,
  });
  report.outcomesDelivered = delivery.delivered;
  report.outcomeDeliveryErrors = delivery.failed;

  report.serviceReachable = !(report.reads > 0 && unreachableReads === report.reads);
  report.durationMs = Math.round(performance.now() - startedAt);
  return report;
}

function countExpired(expired: number): number {
  countOutcomes(expired, 'expired', 'sweep');
  return expired;
}
