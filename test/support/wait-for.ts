/** Polling for a condition in tests that cannot be told when something happened (other processes, timers). */

/** Resolves once `condition` holds; rejects with "timed out waiting for <what>" after `timeoutMs`. */
export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Fails the test (instead of hanging it) when `run` takes longer than `ms`. */
export async function within<T>(ms: number, run: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves after a turn of the event loop: callbacks, and the timers and I/O they set for at once, have run. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(() => setImmediate(resolve), 0));
