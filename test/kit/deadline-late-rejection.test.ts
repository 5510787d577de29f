/**
 * A callback that misses its deadline has been counted as failed (`hook_failed`) and answered for;
 * when it rejects later, its reason goes once to the caller's `onLateRejection` (the kit logs it),
 * never to the caller a second time nor to the process. A rejection in time is the caller's own.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withDeadline } from '../../middleware/deadline.ts';
import { rememberSecret } from '../../middleware/errors.ts';
import { lateRejectionLogger, type KitLogger } from '../../middleware/logger.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

const unhandled = watchUnhandledRejections();

/** A promise the test rejects when it likes. */
function pending(): { promise: Promise<never>; reject(error: unknown): void } {
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<never>((_resolve, rejectWith) => {
    reject = rejectWith;
  });
  return { promise, reject };
}

describe('withDeadline: a rejection after the deadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is reported once, naming the hook, after the caller got hook_failed', async () => {
    const hook = pending();
    const reported: [string, unknown][] = [];
    const run = withDeadline('resolveUser', 100, () => hook.promise, {
      onLateRejection: (name, error) => reported.push([name, error]),
    });
    const outcome = run.then(
      () => 'settled',
      (error: Error) => error.message,
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(await outcome).toContain('resolveUser did not settle within 100 ms');
    const reason = new Error('database connection refused');
    hook.reject(reason);
    await vi.advanceTimersByTimeAsync(0);
    expect(reported).toEqual([['resolveUser', reason]]);
  });

  it('in time is the caller’s and is not reported', async () => {
    const hook = pending();
    const reported: unknown[] = [];
    const run = withDeadline('prepare', 100, () => hook.promise, { onLateRejection: (...late) => reported.push(late) });
    hook.reject(new Error('prepare broke'));
    await expect(run).rejects.toThrow('prepare broke');
    await vi.advanceTimersByTimeAsync(200);
    expect(reported).toEqual([]);
  });

  it('with a reporter that throws, or none at all, reaches nothing else', async () => {
    for (const onLateRejection of [
      () => {
        throw new Error('reporter broke');
      },
      undefined,
    ]) {
      const hook = pending();
      const run = withDeadline('bindTo', 100, () => hook.promise, { onLateRejection });
      const outcome = run.catch(() => 'failed');
      await vi.advanceTimersByTimeAsync(100);
      expect(await outcome).toBe('failed');
      hook.reject(new Error('late'));
      await vi.advanceTimersByTimeAsync(0);
    }
    vi.useRealTimers();
    expect(await unhandled.settled()).toEqual([]);
  });
});

describe('lateRejectionLogger', () => {
  it('logs one error line naming the hook with the reason described: no stack, the client secret redacted', () => {
    const secret = `late-hook-secret-${'k'.repeat(32)}`;
    rememberSecret(secret);
    const lines: { obj: Record<string, unknown>; msg?: string }[] = [];
    const logger: KitLogger = {
      info() {},
      warn() {},
      error: (obj, msg) => void lines.push({ obj, ...(msg === undefined ? {} : { msg }) }),
    };
    lateRejectionLogger(logger)('beforeCreate', new Error(`database connection refused (${secret})`));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.msg).toBe('beforeCreate rejected after its deadline');
    expect(lines[0]?.obj.hook).toBe('beforeCreate');
    const text = JSON.stringify(lines[0]);
    expect(text).toContain('database connection refused');
    expect(text).not.toContain(secret);
    expect(text).not.toMatch(/at .*\.(ts|js):\d+/);
  });
});
