/**
 * A hand-written kit (JavaScript, or a cast) whose `startSweepWorker` is async, returning a promise
 * of its worker, is the integrator's code. `sweep --loop` awaits it: the worker's runs are reported
 * and the stop signal stops it, exit 0. Before, the job took the promise for the worker and at the
 * stop signal failed with `worker.stop is not a function` (exit 3), the worker left running. One
 * that gives no worker, rejects or never settles fails at once, naming the fix, never holding the job;
 * a worker it gives too late is stopped when it comes. On the test clock (fake timers): the job's
 * stop timeout, the worker's interval and a late worker's coming pass without waiting.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runSweepJob, type SweepJobKit, type SweepWorker, type SweepWorkerOptions } from '../../middleware/index.ts';
import { emptyReport } from '../../middleware/sweep/sweep-report.ts';

/** A kit whose startSweepWorker is `start`; the rest does nothing. */
function handWrittenKit(start: (options: SweepWorkerOptions) => unknown): SweepJobKit {
  return {
    runSweep: () => Promise.resolve(emptyReport('hand')),
    startSweepWorker: start as SweepJobKit['startSweepWorker'],
    store: { releaseClaims: () => Promise.resolve(0), close: () => Promise.resolve() },
    close: () => Promise.resolve(),
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs `sweep --loop` on `kit` (its clock a millisecond at a time), stopped after 3 runs were reported (or 5 s). */
async function loop(kit: SweepJobKit) {
  const lines: Record<string, unknown>[] = [];
  const ctl = new AbortController();
  const started = performance.now();
  const running = runSweepJob({
    kit,
    argv: ['--loop'],
    env: {},
    print: (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      if (lines.filter((printed) => printed.event === 'sweep').length === 3) ctl.abort();
    },
    handleSignals: false,
    signal: ctl.signal,
    stopTimeoutMs: 300,
  });
  const timer = setTimeout(() => ctl.abort(), 5000);
  let code: number | undefined;
  void running.then((exit) => (code = exit));
  while (code === undefined) await vi.advanceTimersByTimeAsync(1);
  clearTimeout(timer);
  return { code, lines, ms: performance.now() - started };
}

describe('sweep --loop with a kit whose startSweepWorker is async', () => {
  it('awaits the worker: its runs are reported, the stop signal stops it, exit 0', async () => {
    let stopped = 0;
    const kit = handWrittenKit(async (options): Promise<SweepWorker> => {
      // Connects first, as a hand-written kit may.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const timer = setInterval(() => options.onReport?.(emptyReport('hand')), 50);
      return {
        owner: 'hand',
        running: false,
        runs: 0,
        lastReport: undefined,
        stop: () => {
          clearInterval(timer);
          stopped++;
          return Promise.resolve();
        },
      };
    });
    const { code, lines, ms } = await loop(kit);
    expect(code).toBe(0);
    expect(lines.filter((line) => line.event === 'sweep_failed')).toEqual([]);
    expect(lines.filter((line) => line.event === 'sweep').length).toBeGreaterThanOrEqual(3);
    expect(stopped).toBe(1);
    // Stopped after its third run, not by the 5 s fallback.
    expect(ms).toBeLessThan(4000);
  });

  it('one that gives no worker fails at once with a line naming the fix, exit 3', async () => {
    const { code, lines, ms } = await loop(handWrittenKit(() => Promise.resolve(undefined)));
    expect(code).toBe(3);
    expect(ms).toBeLessThan(2000);
    expect(lines).toEqual([
      {
        event: 'sweep_failed',
        error: expect.objectContaining({
          message: expect.stringContaining(
            'kit.startSweepWorker() gave something that is not a sweep worker (no stop)',
          ),
        }),
      },
    ]);
  });

  it('one that rejects, or never settles, fails within the stop timeout, exit 3', async () => {
    for (const start of [() => Promise.reject(new Error('no database')), () => new Promise(() => {})]) {
      const { code, lines, ms } = await loop(handWrittenKit(start));
      expect(code).toBe(3);
      expect(ms).toBeLessThan(2000);
      expect(lines.map((line) => line.event)).toEqual(['sweep_failed']);
    }
  });

  it('a worker given after the stop timeout is stopped when it comes', async () => {
    let stopped = 0;
    const worker = { owner: 'late', running: false, runs: 0, lastReport: undefined, stop: async () => void stopped++ };
    const late = () => new Promise((resolve) => setTimeout(() => resolve(worker), 600));
    const { code, lines, ms } = await loop(handWrittenKit(late));
    expect(code).toBe(3);
    expect(lines).toEqual([
      { event: 'sweep_failed', error: expect.objectContaining({ message: expect.stringContaining('within 300 ms') }) },
    ]);
    // Not before it comes (600 ms in), and then at once.
    await vi.advanceTimersByTimeAsync(600 - ms - 1);
    expect(stopped).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(stopped).toBe(1);
  });
});
