/**
 * One sweep run: fulfils attempts whose user verified but never came back (the spec: "run a periodic
 * sweep over unfinished pending records ... for users whose browser never returned").
 *
 * A run first marks attempts older than the 24 h window expired (they are never read again), then
 * claims due attempts in batches (a leased, conditional claim in the store, safe across processes),
 * reads each status with bounded concurrency, fulfils through the same fulfil path as the landing
 * (fulfil.ts; grouped commits, see group-commit.ts), and reschedules what is still pending with
 * backoff. Service errors never mark anything: the attempt is rescheduled and read again later.
 * The run's steps are in sweep-run.ts.
 *
 * Last, it delivers outcome events the onOutcome hook has not acknowledged yet (a hook that threw,
 * or a process that died between commit and delivery), leased like claims.
 *
 * Work is bounded per run (batch size, concurrency, time budget), and at most one batch is held
 * in memory at a time, so memory does not grow with the number of unfinished attempts.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { KitError, KitErrorCode } from './errors.ts';
import type { FulfilDeps } from './fulfil.ts';
import { resolveRetention, type ResolvedRetention, type RetentionOptions } from './retention.ts';
import type { Attempt } from './store/types.ts';
import { sweepOnce } from './sweep-run.ts';
import { inSpan, recordSweepLag, SpanName } from './telemetry.ts';

/** The spec's outcome window: a session's outcome is readable for 24 hours. */
export const SWEEP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Default delays between status reads of a pending attempt; the last one repeats. */
export const DEFAULT_SWEEP_BACKOFF_MS: readonly number[] = [30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000];

/** A pino-compatible logger (pino, or anything with these methods). */
export interface SweepLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
}

/** What a run needs: the same dependencies as the landing's fulfil path. */
export type SweepDeps<Tx = unknown> = FulfilDeps<Tx>;

export interface SweepOptions {
  /** Attempts claimed per store call. Default 50 (1..1000). */
  batchSize?: number;
  /** Status reads in flight at once. Default 4 (1..64). */
  concurrency?: number;
  /** How long a claim holds before another worker may take the attempt. Default 120 000 ms (>= 1000). */
  leaseMs?: number;
  /** Stop claiming after this long; in-flight reads finish. Default 60 000 ms (>= 100). */
  timeBudgetMs?: number;
  /** Delays between reads of a still-pending attempt, by reads so far; the last repeats. */
  backoffMs?: readonly number[];
  /** Delay before re-reading after a transient service error (unreachable, protocol). Default 30 000 ms. */
  errorRetryMs?: number;
  /** How long settled attempts keep their params and destination, and are kept at all; false keeps everything. */
  retention?: RetentionOptions | false;
  /** Identifies this worker's claims. Default `<host>:<pid>:<random>`; share it with releaseClaims. */
  owner?: string;
  /** Abort to stop claiming and starting reads; in-flight reads finish, unstarted claims are released. */
  signal?: AbortSignal;
  logger?: SweepLogger;
}

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

export interface ResolvedSweepOptions {
  batchSize: number;
  concurrency: number;
  leaseMs: number;
  timeBudgetMs: number;
  backoffMs: readonly number[];
  errorRetryMs: number;
  retention: ResolvedRetention | false;
  owner: string;
}

/** A fresh owner id: host, pid and a random suffix (two workers in one process differ). */
export function newSweepOwner(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

function invalid(message: string): KitError {
  return new KitError(KitErrorCode.InvalidConfig, message);
}

function checkInteger(name: string, value: unknown, min: number, max: number, unit = ''): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(
      `Sweep option \`${name}\` must be an integer from ${min} to ${max}${unit}; got ${JSON.stringify(value)}. Pass e.g. { ${name}: ${min === 0 ? max : min} } or leave it out for the default.`,
    );
  }
  return value;
}

/** Validates sweep options and fills in defaults. Throws KitError('invalid_config') naming the fix. */
export function resolveSweepOptions(options: SweepOptions = {}): ResolvedSweepOptions {
  if (typeof options !== 'object' || options === null)
    throw invalid('Sweep options must be an object, e.g. { batchSize: 50 }.');
  const batchSize = checkInteger('batchSize', options.batchSize ?? 50, 1, 1000);
  const concurrency = checkInteger('concurrency', options.concurrency ?? 4, 1, 64);
  const leaseMs = checkInteger('leaseMs', options.leaseMs ?? 120_000, 1000, SWEEP_WINDOW_MS, ' ms');
  const timeBudgetMs = checkInteger('timeBudgetMs', options.timeBudgetMs ?? 60_000, 100, SWEEP_WINDOW_MS, ' ms');
  const errorRetryMs = checkInteger('errorRetryMs', options.errorRetryMs ?? 30_000, 1000, SWEEP_WINDOW_MS, ' ms');
  const backoffMs = options.backoffMs ?? DEFAULT_SWEEP_BACKOFF_MS;
  if (
    !Array.isArray(backoffMs) ||
    backoffMs.length === 0 ||
    !backoffMs.every((d) => typeof d === 'number' && Number.isInteger(d) && d >= 1000 && d <= SWEEP_WINDOW_MS)
  ) {
    throw invalid(
      'Sweep option `backoffMs` must be a non-empty array of delays in whole milliseconds, each at least 1000, e.g. [30000, 60000, 300000]; the last one repeats.',
    );
  }
  const owner = options.owner ?? newSweepOwner();
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > 200) {
    throw invalid(
      'Sweep option `owner` must be a non-empty string of at most 200 characters, unique per worker; leave it out to generate one.',
    );
  }
  const retention = resolveRetention(options.retention);
  return { batchSize, concurrency, leaseMs, timeBudgetMs, backoffMs: [...backoffMs], errorRetryMs, owner, retention };
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
  const delay = backoffMs[Math.min(attempt.sweepChecks, backoffMs.length - 1)] ?? DEFAULT_SWEEP_BACKOFF_MS.at(-1)!;
  const windowEnd = attempt.createdAt + SWEEP_WINDOW_MS;
  const lastRead = windowEnd - 60_000;
  const next = now + delay;
  if (next <= lastRead) return next;
  return now < lastRead ? lastRead : windowEnd;
}

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

/** The logger with every call guarded: a throwing logger never disturbs a sweep. */
export function safeLogger(logger: SweepLogger | undefined): SweepLogger | undefined {
  if (logger === undefined) return undefined;
  const guard =
    (level: keyof SweepLogger) =>
    (obj: Record<string, unknown>, msg?: string): void => {
      try {
        logger[level](obj, msg);
      } catch {
        // nothing sensible to do: logging is best effort
      }
    };
  return { info: guard('info'), warn: guard('warn'), error: guard('error') };
}

/** A loggable description of an error: code and message only (never a cause with headers). */
export function describe(error: unknown): Record<string, unknown> {
  if (error instanceof KitError) {
    return {
      code: error.code,
      message: error.message,
      ...(error.serviceStatus === undefined ? {} : { serviceStatus: error.serviceStatus }),
    };
  }
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { message: String(error) };
}
