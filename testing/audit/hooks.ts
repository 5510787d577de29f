/**
 * The integrator's functions the audit calls (sign-in, probe, sweep, logs, read API, fields, close)
 * are outside its trust for liveness: each runs under a deadline, and one that hangs, throws or
 * rejects fails the check that called it with one sentence, never a stack, never a stalled run.
 * Those that must answer at once (an action's fields, a route's path, a sign-in form's fields) run
 * through `callSync`: a throw, or a promise (its rejection caught), is that sentence too.
 */

/** Why an integrator's function failed, in one sentence. */
export class HookError extends Error {
  override name = 'HookError';
}

function describe(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}`;
    return String(error);
  } catch {
    // A value String() refuses (an object without a prototype).
    return Object.prototype.toString.call(error);
  }
}

/** Runs `call` (your `what`) bounded by `timeoutMs`; late results are ignored. */
export async function callHook<T>(what: string, timeoutMs: number, call: () => T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new HookError(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    const running = Promise.resolve().then(call);
    running.catch(() => {});
    return await Promise.race([running, deadline]);
  } catch (error) {
    if (error instanceof HookError) throw error;
    throw new HookError(`${what} failed: ${describe(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `call` (your `what`), which must answer at once: a throw or a returned promise is a HookError. */
export function callSync<T>(what: string, call: () => T): T {
  let result: T;
  try {
    result = call();
  } catch (error) {
    throw new HookError(`${what} threw: ${describe(error)}`);
  }
  if (typeof (result as { then?: unknown } | null)?.then === 'function') {
    // Its rejection is nobody's: it must never reach the process.
    Promise.resolve(result).catch(() => {});
    throw new HookError(`${what} returned a promise; return the value itself`);
  }
  return result;
}
