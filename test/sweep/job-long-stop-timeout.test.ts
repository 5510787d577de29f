/**
 * `runSweepJob({ stopTimeoutMs })` takes up to 2^31-1 ms, and the job waits three stop timeouts for
 * a worker's stop: past about 716 million ms that product is a delay node's timers cannot hold, and
 * node fires such a timer after 1 ms, so a stop of 50 ms was called late and failed the job. A
 * deadline longer than a timer holds now waits as long as a timer can (about 24 days).
 */
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../middleware/deadline.ts';
import { runSweepJob, SweepJobExitCode, type SweepJobKit } from '../../middleware/sweep/sweep-job.ts';
import { waitFor, within } from '../support/wait-for.ts';

const LONGER_THAN_A_TIMER_MS = 3 * 2 ** 31;

describe('a deadline longer than a timer holds', () => {
  it('waits for a hook that answers in 50 ms instead of calling it late after 1 ms', async () => {
    const answer = withDeadline('slowHook', LONGER_THAN_A_TIMER_MS, async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return 'answered';
    });
    await expect(answer).resolves.toBe('answered');
  });

  it('a --loop job with stopTimeoutMs 1,000,000,000 whose worker stops in 50 ms ends with exit 0, no sweep_failed', async () => {
    let started = false;
    const kit: SweepJobKit = {
      runSweep: () => Promise.reject(new Error('not used')),
      startSweepWorker: () => {
        started = true;
        return {
          owner: 'slow-stop',
          running: false,
          runs: 0,
          lastReport: undefined,
          stop: () => new Promise<void>((resolve) => setTimeout(resolve, 50)),
        };
      },
      store: { releaseClaims: async () => 0, close: async () => {} },
      close: async () => {},
    };
    const lines: string[] = [];
    const stop = new AbortController();
    const job = runSweepJob({
      kit,
      argv: ['--loop'],
      env: {},
      print: (line) => void lines.push(line),
      handleSignals: false,
      signal: stop.signal,
      stopTimeoutMs: 1_000_000_000,
    });
    await waitFor(() => started, 5000, 'the worker to start');
    stop.abort();
    expect(await within(5_000, job)).toBe(SweepJobExitCode.Ok);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([{ event: 'sweep_stopping', signal: 'abort' }]);
  });
});
