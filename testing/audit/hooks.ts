/**
 * The integrator's functions the audit calls (sign-in, probe, sweep, logs, read API, fields, close)
 * are outside its trust for liveness: each runs under a deadline, and one that hangs, throws or
 * rejects fails the check that called it with one sentence, never a stack, never a stalled run.
 * Those that must answer at once (an action's fields, a route's path, a sign-in form's fields) run
 * through `callSync`: a throw, or a promise (its rejection caught), is that sentence too.
 */
import { withoutUrlPasswords } from '../../middleware/printable-errors.ts';

/** An integrator's error as one line: its database URL (a pool's error may quote it) without the password. */
function theirs(error: unknown): string {
  return withoutUrlPasswords(describeThrown(error));
}

/** Why an integrator's function failed, in one sentence. */
export class HookError extends Error {
  override name = 'HookError';
}

/** A line of a stack trace (`    at handler (/app/routes.js:12:5)`), as a message may quote one it wraps. */
const STACK_FRAME = /^\s+at \S/;

/** `text` as one line: the stack frames it quotes left out, its other lines joined by a space. */
function oneLine(text: string): string {
  return text
    .split(/\r\n|[\n\r\u2028\u2029]/)
    .filter((line) => !STACK_FRAME.test(line))
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
}

/**
 * Any thrown value as one line, without a stack its message quotes, and never a throw itself: a
 * getter, a toPrimitive or a revoked Proxy may refuse `instanceof`, String() and even
 * Object.prototype.toString.
 */
export function describeThrown(error: unknown): string {
  try {
    // A HookError's message is already the sentence; another error's name says what kind it was.
    if (error instanceof Error) {
      return oneLine(
        `${error.name === 'Error' || error instanceof HookError ? '' : `${error.name}: `}${error.message}`,
      );
    }
    return oneLine(String(error));
  } catch {
    try {
      // A value String() refuses (an object without a prototype).
      return Object.prototype.toString.call(error);
    } catch {
      return 'a value that cannot be read';
    }
  }
}

/** `instanceof` throws on a revoked Proxy: such a value is the integrator's, not a HookError. */
function isHookError(error: unknown): error is HookError {
  try {
    return error instanceof HookError;
  } catch {
    return false;
  }
}

/** Whether `result` is a promise (or looks like one); a `then` that cannot be read is `what`'s fault. */
function isThenable(what: string, result: unknown): boolean {
  try {
    return typeof (result as { then?: unknown } | null)?.then === 'function';
  } catch (error) {
    throw new HookError(`${what} returned a value whose \`then\` cannot be read: ${theirs(error)}`);
  }
}

/**
 * A deadline as a sentence says it: in seconds from 100 s on, so that no deadline is seven digits
 * in a row, which the report masks as a phone number (three times a `timeoutMs` of 400 s).
 */
function deadline(ms: number): string {
  return ms < 100_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/**
 * Runs `call` (your `what`) bounded by `timeoutMs`; a late result is ignored, and a late rejection's
 * reason goes to `onLateRejection` when given (the deadline's sentence alone never says why it failed).
 */
export async function callHook<T>(
  what: string,
  timeoutMs: number,
  call: () => T | Promise<T>,
  onLateRejection?: (error: unknown) => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const expiry = new Promise<never>((_resolve, reject) => {
    // Not unref'd (it is cleared as soon as the call settles): a call that never settles and holds
    // nothing else must not let node end the audit's process unsaid.
    timer = setTimeout(() => {
      late = true;
      reject(new HookError(`${what} did not answer within ${deadline(timeoutMs)}`));
    }, timeoutMs);
  });
  try {
    const running = Promise.resolve().then(call);
    running.catch((error: unknown) => {
      if (!late || onLateRejection === undefined) return;
      try {
        onLateRejection(error);
      } catch {
        // The reporter's own failure has nowhere left to go.
      }
    });
    return await Promise.race([running, expiry]);
  } catch (error) {
    if (isHookError(error)) throw error;
    throw new HookError(`${what} failed: ${theirs(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** A value an integrator's function answered, named without quoting it (it may be anything, of any length). */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return 'a string';
  return Array.isArray(value) ? 'an array' : `a${typeof value === 'object' ? 'n' : ''} ${typeof value}`;
}

/**
 * What `what` answered, as a count: a whole number, or one a driver spells as a bigint or a string
 * of digits (node-postgres answers `count(*)` as a string). Anything else is a HookError.
 */
export function countOf(what: string, value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'bigint' && value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  throw new HookError(`${what} answered ${kindOf(value)}, not a count (a whole number, e.g. a SELECT count(*))`);
}

/** Runs your count `what` (a probe, a route's effects) under `timeoutMs`; its answer read by countOf. */
export async function callCount(what: string, timeoutMs: number, call: () => unknown): Promise<number> {
  return countOf(what, await callHook(what, timeoutMs, call));
}

/**
 * What `what` (`kit.attempts.get`) answered, as a count of the attempt's effect: 1 once the kit
 * marked it fulfilled (`fulfilledAt` a time), 0 while not, or for an attempt it does not know
 * (undefined, or null as a read relayed as JSON says it). Anything else is a HookError.
 */
export function fulfilmentsOf(what: string, summary: unknown): number {
  if (summary === undefined || summary === null) return 0;
  const fulfilledAt = typeof summary === 'object' ? (summary as { fulfilledAt?: unknown }).fulfilledAt : undefined;
  if (fulfilledAt === null) return 0;
  if (typeof fulfilledAt === 'number') return 1;
  throw new HookError(`${what} answered ${kindOf(summary)}, not an attempt (its fulfilledAt a time, or null)`);
}

/**
 * The most lines the audit reads of one answer: read on the event loop, an array claiming more
 * (a nonsense `length` with no elements) would be walked past any deadline.
 */
const MAX_LOG_LINES = 1_000_000;

/** The log `what` answered as lines: an array of strings, or the log as one text. Anything else is a HookError. */
export function linesOf(what: string, value: unknown): readonly string[] {
  if (typeof value === 'string') return value.split(/\r?\n/);
  if (Array.isArray(value)) {
    if (value.length > MAX_LOG_LINES) {
      throw new HookError(
        `${what} answered ${value.length} lines; the audit reads at most ${MAX_LOG_LINES}: answer the recent lines`,
      );
    }
    return value.map((line) => String(line));
  }
  throw new HookError(`${what} answered ${kindOf(value)}, not the log's lines (an array of strings, or one text)`);
}

/** Runs `call` (your `what`), which must answer at once: a throw or a returned promise is a HookError. */
export function callSync<T>(what: string, call: () => T): T {
  let result: T;
  try {
    result = call();
  } catch (error) {
    throw new HookError(`${what} threw: ${theirs(error)}`);
  }
  if (isThenable(what, result)) {
    // Its rejection is nobody's: it must never reach the process.
    Promise.resolve(result).catch(() => {});
    throw new HookError(`${what} returned a promise; return the value itself`);
  }
  return result;
}
