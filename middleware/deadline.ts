/**
 * The integrator's code is outside the kit's trust for liveness: every callback the kit awaits runs
 * here, under a deadline. A callback that throws (synchronously or by rejecting) or does not settle
 * in time rejects with KitError `hook_failed`; whatever it does later changes nothing and is never an
 * unhandled rejection, but a late rejection's reason goes to the caller's `onLateRejection` (the
 * kit logs it: the deadline's message alone never says why the callback failed). Synchronous code
 * cannot be pre-empted, so a callback that never returns (a SQLite fulfil in an endless loop) is
 * the one thing no deadline bounds.
 */
import { KitError, KitErrorCode, missedDeadline } from './errors.ts';

/** The callbacks the kit awaits, by the name their deadline has in `hookTimeouts`. */
export type HookName =
  | 'resolveUser'
  | 'defaultCountry'
  | 'prepare'
  | 'beforeCreate'
  | 'limits'
  | 'challenge'
  | 'csrfCheck'
  | 'bindTo'
  | 'onUnenrolled'
  | 'client'
  | 'onOutcome'
  | 'fulfil'
  | 'store';

/** Each callback's deadline in ms. */
export type HookTimeouts = Readonly<Record<HookName, number>>;

/** A user waits on the request hooks; the after-commit hook and an async fulfil get longer. */
export const DEFAULT_HOOK_TIMEOUTS: HookTimeouts = {
  resolveUser: 5_000,
  defaultCountry: 5_000,
  prepare: 5_000,
  beforeCreate: 5_000,
  // The start limits' consume, the refund of a start the busy service never created, and the
  // give-back of the text the SMS pumping check counted for a start that never created one.
  limits: 5_000,
  // The app's challenge (a CAPTCHA's server check) for a start the SMS pumping rules would refuse.
  challenge: 5_000,
  csrfCheck: 5_000,
  bindTo: 5_000,
  // A step-up guard's handler for a user without a number: it answers, or calls next().
  onUnenrolled: 5_000,
  // A ready client's call: longer than the kit's own client's retries (20 s) would take.
  client: 30_000,
  onOutcome: 10_000,
  fulfil: 10_000,
  // Each call of the kit's store on a request (the start's, the landing's, the mobile
  // completion's): a store of the app's own, or a pool with no free connection, may never answer.
  store: 10_000,
};

export const HOOK_NAMES = Object.keys(DEFAULT_HOOK_TIMEOUTS) as readonly HookName[];

/** True for a promise, or anything `await` would treat as one. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Told of a callback's rejection that came after its deadline had already counted it as failed. */
export type LateRejectionReporter = (name: string, error: unknown) => void;

export interface DeadlineOptions {
  /** The error a late callback becomes (default: KitError `hook_failed` naming the hook and the deadline). */
  late?: () => Error;
  /** Where the reason of a rejection after the deadline goes, once; it is dropped without one. */
  onLateRejection?: LateRejectionReporter | undefined;
}

/**
 * Runs `hook` and waits at most `ms` for it. Its own error is passed on as it is (a KitError it threw
 * keeps its meaning); a late one becomes KitError `hook_failed` naming the hook and the deadline, or
 * what `late` makes. `options` may be just the `late` function.
 */
export function withDeadline<T>(
  name: string,
  ms: number,
  hook: () => T | PromiseLike<T>,
  options: DeadlineOptions | (() => Error) = {},
): Promise<Awaited<T>> {
  const { late = () => hookFailedLate(name, ms), onLateRejection } =
    typeof options === 'function' ? { late: options } : options;
  let result: T | PromiseLike<T>;
  let thenable: boolean;
  try {
    result = hook();
    // Read here too: what the hook answered may throw when looked at (a revoked Proxy, a `then` getter).
    thenable = isThenable(result);
  } catch (error) {
    return Promise.reject(error);
  }
  if (!thenable) return Promise.resolve(result as Awaited<T>);
  const settled = Promise.resolve(result) as Promise<Awaited<T>>;
  return new Promise<Awaited<T>>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        reject(missedDeadline(late()));
      },
      Math.min(LONGEST_TIMER_MS, Math.max(0, ms)),
    );
    timer.unref();
    settled.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        // The caller was answered at the deadline; this is the one place the real reason is left.
        if (timedOut && onLateRejection !== undefined) runDetached(() => onLateRejection(name, error), ignore);
        else reject(error);
      },
    );
  });
}

/**
 * A store call of a user's request, waited on for `ms` at most: the store is the integrator's code
 * (a store of the app's own, a pg Pool with no free connection), and a late call fails with
 * `store_unavailable`, which answers the request 503.
 */
export function withStoreDeadline<T>(
  name: string,
  ms: number,
  call: () => T | PromiseLike<T>,
  onLateRejection: LateRejectionReporter,
): Promise<Awaited<T>> {
  const late = () =>
    new KitError(
      KitErrorCode.StoreUnavailable,
      `${name} did not answer within ${ms} ms; the request was answered without it (raise hookTimeouts.store if the store needs longer).`,
    );
  return withDeadline(name, ms, call, { late, onLateRejection });
}

function hookFailedLate(name: string, ms: number): KitError {
  return new KitError(
    KitErrorCode.HookFailed,
    `${name} did not settle within ${ms} ms; it counts as failed (raise hookTimeouts.${name} if it needs longer).`,
  );
}

/**
 * The longest delay a timer keeps: node fires a longer one after 1 ms. A deadline computed from
 * long settings (three stop timeouts, twice a time budget) waits this long instead, about 24 days.
 */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

const ignore = (): void => {
  // the reporter is the kit's own guarded logger: nothing is left to tell of its failure
};

/**
 * Runs `work`, holding a command's process open until it settles. The deadlines' timers are
 * unref'd (a kit inside an app must never hold it open), so in a command whose last pending thing
 * is a call that never settles and holds nothing, node would end the process at once with exit 13
 * and nothing said; held open, the call's deadline fires and the command says why it stopped.
 */
export async function keepingProcessAlive<T>(work: () => Promise<T>): Promise<T> {
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    return await work();
  } finally {
    clearInterval(keepAlive);
  }
}

/** A callback's result as it is, or, when it is a promise, under the deadline (a sync fulfil stays sync). */
export function boundIfAsync<T>(
  name: string,
  ms: number,
  result: T,
  onLateRejection?: LateRejectionReporter,
): T | Promise<Awaited<T>> {
  return isThenable(result)
    ? (withDeadline(name, ms, () => result, { onLateRejection }) as Promise<Awaited<T>>)
    : result;
}

/** Runs a synchronous callback whose failure must not escape: its throw, or a promise it returned, is reported. */
export function guardSync<T>(hook: () => T, onFailure: (error: unknown) => void): T | undefined {
  try {
    const result = hook();
    if (!isThenable(result)) return result;
    result.then(undefined, onFailure);
    onFailure(new TypeError('returned a promise where a value was expected'));
  } catch (error) {
    onFailure(error);
  }
  return undefined;
}

/** Runs a callback nobody waits for: its throw or its rejection goes to `onFailure`, never to the process. */
export function runDetached(hook: () => unknown, onFailure: (error: unknown) => void): void {
  try {
    const result = hook();
    if (isThenable(result)) result.then(undefined, onFailure);
  } catch (error) {
    onFailure(error);
  }
}
