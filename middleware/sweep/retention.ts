/**
 * Data kept only as long as needed. A settled attempt's params (e.g. an account number) and the
 * destination it texted are needed for its outcome and its hook, not for years: each sweep run
 * removes them after `redactAfterMs` and deletes the attempt after `deleteAfterMs`, a small batch
 * at a time so a run stays short. Pending attempts are never touched (they expire after 24 h).
 * Expired step-up intents (kept pages and forms, whose fields may be secrets) and step-up grants
 * older than any maxAge are deleted by every run, a batch at a time, whatever `retention` says:
 * nothing can use them again. A custom step-up store written before grants were purged has no
 * `purgeStaleGrants`: its grants are kept, the run says so, and nothing else changes. A custom
 * store's purge that throws or rejects is housekeeping that failed: logged and counted, never the
 * end of the run that fulfils what users verified; one that returns no count deleted 0 as far as
 * the run's report says.
 */
import { withDeadline } from '../deadline.ts';
import { describeError, lateRejectionLogger, type KitLogger } from '../logger.ts';
import type { OptionProblems } from '../options/option-problems.ts';
import { GRANT_USABLE_MS } from '../step-up/guard-options.ts';
import type { VerifyStore } from '../store/types.ts';
import type { SweepReport } from './sweep-report.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long settled attempts keep their details, and are kept at all. */
export interface RetentionOptions {
  /** After this long a settled attempt keeps no params and no destination. Default 30 days. */
  redactAfterMs?: number;
  /** After this long a settled attempt is deleted. Default 90 days; at least `redactAfterMs`. */
  deleteAfterMs?: number;
  /** Rows redacted, and rows deleted, per sweep run. Default 200. */
  batchSize?: number;
}

/** Defaults of the sweep's `retention`: redact after 30 days, delete after 90. */
export const DEFAULT_RETENTION = { redactAfterMs: 30 * DAY_MS, deleteAfterMs: 90 * DAY_MS, batchSize: 200 } as const;

export type ResolvedRetention = Required<RetentionOptions>;

/** Checks retention options (or `false`: keep everything) and fills in defaults; a problem names the fix. */
export function resolveRetention(
  problems: OptionProblems,
  options: RetentionOptions | false | undefined,
): ResolvedRetention | false {
  if (options === false) return false;
  const o = options ?? {};
  const redactAfterMs = o.redactAfterMs ?? DEFAULT_RETENTION.redactAfterMs;
  const deleteAfterMs = o.deleteAfterMs ?? Math.max(DEFAULT_RETENTION.deleteAfterMs, redactAfterMs);
  const batchSize = o.batchSize ?? DEFAULT_RETENTION.batchSize;
  const whole = (n: unknown, min: number) => typeof n === 'number' && Number.isInteger(n) && n >= min;
  if (!whole(redactAfterMs, 60_000) || !whole(deleteAfterMs, redactAfterMs) || !whole(batchSize, 1)) {
    problems.add(
      '`retention` needs whole milliseconds with redactAfterMs >= 60000 and deleteAfterMs >= redactAfterMs, ' +
        'and a batchSize >= 1, e.g. { redactAfterMs: 30 * 86400000, deleteAfterMs: 90 * 86400000 }; or false to keep everything.',
    );
  }
  return { redactAfterMs, deleteAfterMs, batchSize };
}

/**
 * The longest one step-up purge is waited for: a tenth of the run's time budget. Housekeeping that
 * hangs (a custom store's forgotten promise) is given up then, and the run goes on to what users
 * verified; the store itself is not given up for the run, as a late call of the run's own is.
 */
export function stepUpPurgeMs(timeBudgetMs: number): number {
  return Math.max(1, Math.ceil(timeBudgetMs / 10));
}

/** How the step-up purges are run: on the store as the app gave it, each under its own deadline. */
export interface StepUpPurges {
  stepUp: VerifyStore['stepUp'];
  timeoutMs: number;
}

/** Each step-up store's purges already logged as returning no count: once per store and method, not once per run. */
const warnedOfNoCount = new WeakMap<object, Set<string>>();

/**
 * What a purge returned as the rows it deleted: a whole number from 0, or 0 for anything else (a
 * custom store's undefined, string or object), said once per store and method, never quoted.
 */
function deletedCount(stepUp: object, name: string, returned: unknown, logger: KitLogger | undefined): number {
  if (typeof returned === 'number' && Number.isInteger(returned) && returned >= 0) return returned;
  const warned = warnedOfNoCount.get(stepUp) ?? new Set<string>();
  warnedOfNoCount.set(stepUp, warned);
  if (!warned.has(name)) {
    warned.add(name);
    logger?.warn(
      {},
      `sweep: the store's stepUp.${name} returned something other than a count of rows deleted; it is counted as 0. ` +
        'Return the number of rows it deleted (see StepUpStore).',
    );
  }
  return 0;
}

/** What one step-up purge deleted; one that throws, rejects or is late deleted nothing, and is logged and counted. */
async function purged(
  stepUp: object,
  name: string,
  purge: () => Promise<unknown> | undefined,
  failures: { count: number },
  logger: KitLogger | undefined,
  timeoutMs: number | undefined,
): Promise<number> {
  try {
    const late = () => new Error(`did not settle within ${timeoutMs} ms (a tenth of the sweep run's time budget)`);
    const returned =
      timeoutMs === undefined
        ? await purge()
        : await withDeadline(`stepUp.${name}`, timeoutMs, purge, {
            late,
            onLateRejection: logger && lateRejectionLogger(logger),
          });
    return deletedCount(stepUp, name, returned, logger);
  } catch (error) {
    failures.count++;
    logger?.error(
      { err: describeError(error) },
      `sweep: the store's stepUp.${name} failed; nothing was deleted by it, and the run goes on`,
    );
    return 0;
  }
}

/** One retention step of a sweep run. */
export async function applyRetention(
  store: Pick<VerifyStore, 'applyRetention' | 'stepUp'>,
  now: number,
  retention: ResolvedRetention | false,
  logger?: KitLogger,
  purges?: StepUpPurges,
): Promise<
  Pick<
    SweepReport,
    'redacted' | 'deleted' | 'intentsDeleted' | 'grantsDeleted' | 'grantsPurgeSkipped' | 'stepUpPurgeErrors'
  >
> {
  const limit = retention === false ? DEFAULT_RETENTION.batchSize : retention.batchSize;
  const stepUp = purges === undefined ? store.stepUp : purges.stepUp;
  const timeoutMs = purges?.timeoutMs;
  const failures = { count: 0 };
  // A store without step-up has nothing to purge.
  const intentsDeleted =
    stepUp === undefined
      ? 0
      : await purged(
          stepUp,
          'purgeExpiredIntents',
          () => stepUp.purgeExpiredIntents({ now, limit }),
          failures,
          logger,
          timeoutMs,
        );
  // Optional: a custom store written against the earlier StepUpStore has none.
  const grantsPurgeSkipped = stepUp !== undefined && typeof stepUp.purgeStaleGrants !== 'function';
  const grantsDeleted =
    stepUp === undefined || grantsPurgeSkipped
      ? 0
      : await purged(
          stepUp,
          'purgeStaleGrants',
          () => stepUp.purgeStaleGrants?.({ startedBefore: now - GRANT_USABLE_MS, limit }),
          failures,
          logger,
          timeoutMs,
        );
  const steppedUp = { intentsDeleted, grantsDeleted, grantsPurgeSkipped, stepUpPurgeErrors: failures.count };
  if (retention === false) return { redacted: 0, deleted: 0, ...steppedUp };
  const attempts = await store.applyRetention({
    now,
    redactBefore: now - retention.redactAfterMs,
    deleteBefore: now - retention.deleteAfterMs,
    limit,
  });
  return { ...attempts, ...steppedUp };
}

/** Stores whose missing purgeStaleGrants was already logged: once per store, not once per run. */
const warnedOfNoGrantPurge = new WeakSet<object>();

/** Says once per store that its step-up grants are not deleted, and how to have them deleted. */
export function warnOfNoGrantPurge(store: object, logger: KitLogger | undefined): void {
  if (warnedOfNoGrantPurge.has(store)) return;
  warnedOfNoGrantPurge.add(store);
  logger?.warn(
    {},
    "sweep: the store's stepUp has no purgeStaleGrants, so step-up grants are never deleted; " +
      "add purgeStaleGrants({ startedBefore, limit }) to it (see StepUpStore), or use the kit's SQLite or PostgreSQL store",
  );
}
