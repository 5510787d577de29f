/**
 * A hook's deadline is said in what the audit reports so that it reads as a duration, not as a
 * phone number masked: a signIn given three times a `timeoutMs` of 400 s (1 200 000 ms, seven
 * digits in a row the report would mask) is said to have missed 1200 s.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callHook } from '../../testing/audit/hooks.ts';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** The sentence a hook that never answers fails with, as the report says it. */
async function missed(deadlineMs: number): Promise<string> {
  vi.useFakeTimers();
  const call = callHook("your signIn(agent, 'audit1')", deadlineMs, () => new Promise<never>(() => {}));
  const failed = call.catch((error: unknown) => (error as Error).message);
  await vi.advanceTimersByTimeAsync(deadlineMs);
  return maskEveryNumber(await failed);
}

describe("a hook's deadline in the report", () => {
  it('says a deadline of seven digits in milliseconds in seconds, never masked', async () => {
    expect(await missed(1_200_000)).toBe("your signIn(agent, 'audit1') did not answer within 1200 s");
  });

  it('says a short deadline in milliseconds, as before', async () => {
    expect(await missed(3000)).toBe("your signIn(agent, 'audit1') did not answer within 3000 ms");
  });
});
