/**
 * A sweep run's time budget (`timeBudgetMs`). The end of the budget is kept for finishing what the
 * run started: no read starts in its last half, or in its last `hookTimeouts.fulfil` (or onOutcome,
 * the longer) when that is shorter. A read, a fulfilment after a read the run started, and outcome
 * delivery (at least a batch in every run), get that finishing time as their deadline. The store's
 * calls get one finishing time more (a group commit's call, its fulfils one after another, up to
 * the end), all of them ending by the budget, that share and most of another, which is where a run
 * ends at the latest, whatever a callback does; after a late one the run touches the store no more.
 * A fulfil or onOutcome answers before that end, even if less than its finishing time is then left.
 */
import { DEFAULT_HOOK_TIMEOUTS, withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { lateRejectionLogger, markingErrors } from '../logger.ts';
import { callsThrough } from '../store/calls-through.ts';
import type { VerifyStore } from '../store/types.ts';
import type { SweepDeps } from './sweep-report.ts';

const FINISH_SHARE = 0.5;
/**
 * The store's last call ends by the budget, its finishing time and this much of another: short of
 * twice the budget, where the sweep job gives up a run as one that never answers.
 */
const STORE_SHARE = 0.8;
/** Kept after the last callback's deadline for the store call after it (a rollback, a mark) before the store's end. */
const ROLLBACK_SHARE = 0.2;

/** The budget's clock unless the deps give one: monotonic, so a wall clock set back never stretches a run. */
export const monotonicClock = (): number => performance.now();

export interface RunBudget {
  /** No read starts after this many ms of the run. */
  readingMs: number;
  /** What every callback of the run is given at least (its own timeout permitting). */
  finishingMs: number;
}

export function runBudget(timeBudgetMs: number, hookTimeouts: SweepDeps<unknown>['hookTimeouts']): RunBudget {
  const longest = Math.max(
    hookTimeouts?.fulfil ?? DEFAULT_HOOK_TIMEOUTS.fulfil,
    hookTimeouts?.onOutcome ?? DEFAULT_HOOK_TIMEOUTS.onOutcome,
  );
  const finishingMs = Math.min(timeBudgetMs * FINISH_SHARE, longest);
  return { readingMs: timeBudgetMs - finishingMs, finishingMs };
}

/**
 * The deps with the integrator's callbacks (fulfil, onOutcome) given what is left of the run's
 * time budget, and never less than its finishing time: a read the run started deserves a real
 * deadline for its fulfilment. The store's calls are bounded too (storeWithinBudget).
 */
export function withinBudget<Tx>(
  deps: SweepDeps<Tx>,
  startedAt: number,
  budget: RunBudget,
  now: () => number = monotonicClock,
): SweepDeps<Tx> {
  const given = deps.hookTimeouts;
  return {
    ...deps,
    store: storeWithinBudget(deps.store, startedAt, budget, now, deps.logger && lateRejectionLogger(deps.logger)),
    get hookTimeouts() {
      const left = Math.min(timeLeft(startedAt, budget, now), callbacksEndIn(startedAt, budget, now));
      // Every other deadline as the kit was given it: the count of a verified text waits `limits`.
      return {
        ...given,
        fulfil: Math.min(given?.fulfil ?? DEFAULT_HOOK_TIMEOUTS.fulfil, left),
        onOutcome: Math.min(given?.onOutcome ?? DEFAULT_HOOK_TIMEOUTS.onOutcome, left),
      };
    },
  };
}

/**
 * The run's store, each call given what is left of the budget plus one finishing time more: a
 * fulfilment's call runs the action's fulfil, whose own deadline (what is left) must answer first.
 * A group commit's call (fulfilBatch) runs its fulfils one after another: it is given up to the
 * store's end, before which each of them answers.
 * However slow the store, its calls all end by the store's end (storeCallsEndIn): a call is not made
 * past it, so a slow store ends the run in time, saying which call and how far into the run.
 * The store is the integrator's code, outside the kit's trust for liveness (a custom store, or a pg
 * Pool with no free connection, which waits for ever): a call still unsettled then fails the way a
 * store error fails, and the store is given up for the rest of the run. Every later call fails at
 * once without reaching it, so nothing is marked, rescheduled or released after a late call (the
 * run's claims lapse with their lease). What a late call does when it settles changes nothing; a
 * late rejection's reason goes to `onLateRejection` (the run logs it).
 */
export function storeWithinBudget<Tx>(
  store: VerifyStore<Tx>,
  startedAt: number,
  budget: RunBudget,
  now: () => number = monotonicClock,
  onLateRejection?: LateRejectionReporter,
): VerifyStore<Tx> {
  let givenUp: Error | undefined;
  return callsThrough(store, (name, call) => {
    if (givenUp !== undefined) return Promise.reject(givenUp);
    const end = storeCallsEndIn(startedAt, budget, now);
    // A group commit runs its fulfils one after another, each answering before the store's end
    // (callbacksEndIn): cut sooner, its transaction would go on and commit after the run said not.
    const ms = name === 'fulfilBatch' ? end : Math.min(timeLeft(startedAt, budget, now) + budget.finishingMs, end);
    const into = () => `${Math.round(now() - startedAt)} ms into the run`;
    const late = () =>
      (givenUp = new Error(
        `${name} did not settle within ${ms} ms (what was left of the sweep run's time for the store), ${into()}; ${STORE_TOO_SLOW}`,
      ));
    if (ms <= 0) {
      givenUp = new Error(
        `${name} was not called: the sweep run's time for the store was over, ${into()}; ${STORE_TOO_SLOW}`,
      );
      return Promise.reject(givenUp);
    }
    // A KitError of a store of the app's own is in its words (it may name the number): logged masked.
    return withDeadline(`store.${name}`, ms, () => markingErrors(call), { late, onLateRejection });
  });
}

const STORE_TOO_SLOW =
  'the run ends, its claims lapse with the lease (a larger time budget, or a faster store, lets a run finish)';

/**
 * What is left (by the run's clock) until a fulfil or onOutcome must have answered: a fifth of the
 * finishing time before the store's end. A late fulfil's transaction rolls back, and the run says
 * nothing was marked, before the store call running it is given up (a cut call could still commit
 * afterwards); a late onOutcome's event is written due again, as an answered one is marked delivered.
 */
function callbacksEndIn(startedAt: number, budget: RunBudget, now: () => number): number {
  return storeCallsEndIn(startedAt, budget, now) - Math.ceil(ROLLBACK_SHARE * budget.finishingMs);
}

/** What is left (by the run's clock) until the store's last call must have ended; 0 or less once past it. */
export function storeCallsEndIn(startedAt: number, budget: RunBudget, now: () => number = monotonicClock): number {
  return Math.floor(startedAt + budget.readingMs + (2 + STORE_SHARE) * budget.finishingMs - now());
}

/**
 * What is left of the run's budget (by the run's clock, `now`), and never less than its finishing
 * time: the deadline of what the run started.
 */
export function timeLeft(startedAt: number, budget: RunBudget, now: () => number = monotonicClock): number {
  const endsAt = startedAt + budget.readingMs + budget.finishingMs;
  return Math.max(budget.finishingMs, Math.ceil(endsAt - now()));
}

/**
 * What is left (by the run's clock) until the end the run keeps to, its budget and one finishing
 * time, for a step that can wait for a later run; 0 or less once past it.
 */
export function untilRunEnds(startedAt: number, budget: RunBudget, now: () => number = monotonicClock): number {
  return Math.floor(startedAt + budget.readingMs + 2 * budget.finishingMs - now());
}

/** When outcome delivery stops claiming: never before its first batch (unless stopped by a signal), then at the budget's end. */
export function deliveryStop(
  endsAt: number,
  signal: AbortSignal | undefined,
  now: () => number = monotonicClock,
): () => boolean {
  let batches = 0;
  return () => signal?.aborted === true || (batches++ > 0 && now() >= endsAt);
}

/** The end of a run's reads: `race` gives up a read still unanswered then; `end` when the run is over. */
export interface ReadsCutOff {
  race<T>(read: Promise<T>): Promise<T>;
  end(): void;
}

/**
 * Gives up a status read still unanswered when the run's budget, finishing time included, is over
 * (a ready client is the app's code); it is read again later. One timer for the run; every read
 * starts before the reading time ends, so each gets at least the finishing time. Only the reads in
 * flight are held: `Promise.race` against one promise pending for the whole run would keep every
 * read's answer until the run ends (hundreds of bytes a read, for every read of a long run).
 */
export function readsCutOff(startedAt: number, budget: RunBudget, now: () => number = monotonicClock): ReadsCutOff {
  const inFlight = new Set<(error: KitError) => void>();
  const timer = setTimeout(
    () => {
      const error = new KitError(
        KitErrorCode.ServiceUnavailable,
        "The status read did not answer within the sweep's time budget; it is read again later.",
      );
      for (const giveUp of inFlight) giveUp(error);
      inFlight.clear();
    },
    timeLeft(startedAt, budget, now),
  );
  timer.unref();
  return {
    race: (read) =>
      new Promise((resolve, reject) => {
        inFlight.add(reject);
        read.then(
          (value) => {
            inFlight.delete(reject);
            resolve(value);
          },
          (error: unknown) => {
            inFlight.delete(reject);
            reject(error);
          },
        );
      }),
    end: () => clearTimeout(timer),
  };
}
