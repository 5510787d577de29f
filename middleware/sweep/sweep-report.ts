/** What one sweep run needs and what it reports. */
import type { FulfilContext } from '../context.ts';
import type { Completion } from '../fulfil/fulfil.ts';

/** What a run needs: the same dependencies as the landing's fulfil path. */
export type SweepDeps<Tx = unknown> = FulfilContext<Tx> & {
  /**
   * The clock of the run's time budget, in ms, never going back (a test passes one it moves).
   * Default performance.now. `now` stays the clock of the attempts' times.
   */
  monotonicNow?: () => number;
};

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
  /**
   * Reads the service answered 429: the sweep slowed down (every process sharing the store) and
   * read those attempts again after the Retry-After, in the same run when time allowed.
   */
  rateLimited: number;
  /** Reads or fulfilments that failed; the attempts were rescheduled, nothing was marked. */
  errors: number;
  /** Claimed attempts not started because the run was stopped or ran out of time (released). */
  released: number;
  /**
   * Claimed attempts not read because their claim's lease was running out (a slow pace): left to
   * lapse, so that the next claim reads them, and never two processes at once (while a read ends
   * within its lease: see `leaseMs`).
   */
  leftToLapse: number;
  /**
   * Claimed attempts started under another client id: not read (the service answers `pending`
   * for another client's sessions whatever happened), moved on in the schedule as if read pending.
   */
  otherClient: number;
  /**
   * Claimed attempts no read could fulfil (their action is no longer registered, or it proves the
   * destination and the attempt was started without a userRef bound to its number), with the SMS
   * pumping rules off (then no read counts a verified text either): not read, moved on in the
   * schedule as if read pending. The landing still reads one its user comes back to.
   */
  unfulfillable: number;
  durationMs: number;
  /**
   * False when at least one read was made and none got a usable answer from the service
   * (every one failed as service_unavailable, service_protocol_error or service_rejected).
   */
  serviceReachable: boolean;
  /**
   * Why the run ended before the due work was exhausted, if it did. `service_unreachable`: its
   * first reads (twice `concurrency`, at least 10) all went unanswered, so it read no more.
   */
  stoppedBy: 'signal' | 'time_budget' | 'service_unreachable' | null;
  /** How overdue the most overdue attempt this run claimed was (0 when none was due): the sweep's lag. */
  oldestDueAgeMs: number;
  /** Settled attempts whose params and destination retention removed in this run. */
  redacted: number;
  /** Settled attempts retention deleted in this run. */
  deleted: number;
  /** Expired step-up intents (kept pages and forms) deleted in this run. */
  intentsDeleted: number;
  /** Step-up grants started longer ago than any maxAge, deleted in this run. */
  grantsDeleted: number;
  /** True when the store's stepUp has no purgeStaleGrants (a custom store): no grant was deleted. */
  grantsPurgeSkipped: boolean;
  /** Step-up purges (intents, grants) of a custom store that threw or rejected in this run (logged; the run went on). */
  stepUpPurgeErrors: number;
}

/** A report before the run's first step: every count zero. */
export function emptyReport(owner: string): SweepReport {
  return {
    owner,
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
    rateLimited: 0,
    errors: 0,
    released: 0,
    leftToLapse: 0,
    otherClient: 0,
    unfulfillable: 0,
    durationMs: 0,
    serviceReachable: true,
    stoppedBy: null,
    oldestDueAgeMs: 0,
    redacted: 0,
    deleted: 0,
    intentsDeleted: 0,
    grantsDeleted: 0,
    grantsPurgeSkipped: false,
    stepUpPurgeErrors: 0,
  };
}

/** Counts what one check recorded in the run's report. */
export function countCompletion(report: SweepReport, completion: Completion): void {
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
      return;
  }
}
