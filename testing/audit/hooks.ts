/**
 * The integrator's functions the audit calls (sign-in, probe, sweep, logs, read API, fields, close)
 * are outside its trust for liveness: each runs under a deadline, and one that hangs, throws or
 * rejects fails the check that called it with one sentence, never a stack, never a stalled run.
 */

/** Why an integrator's function failed, in one sentence. */
export class HookError extends Error {
  override name = 'HookError';
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}`;
  return String(error);
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
