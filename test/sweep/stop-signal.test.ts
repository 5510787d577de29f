/**
 * How the sweep job hears it should stop: only a second SIGTERM or SIGINT ends the process at once.
 * One signal the operator sends after the caller's own AbortSignal already stopped the job is the
 * operator's first: the job keeps stopping gracefully (releasing its claims) instead of killing the
 * process and leaving its claims to lapse.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { stopSignal } from '../../middleware/sweep/stop-signal.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

it("a SIGTERM after the caller's signal stopped the job is its first: a graceful stop, the process not ended", () => {
  const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
  const lines: Record<string, unknown>[] = [];
  const caller = new AbortController();
  const stop = stopSignal({ handleSignals: true, signal: caller.signal }, (line) => lines.push(line));
  try {
    caller.abort();
    expect(stop.signal.aborted).toBe(true);
    process.emit('SIGTERM', 'SIGTERM');
    expect(lines).toEqual([{ event: 'sweep_stopping', signal: 'abort' }]);
    expect(kill).not.toHaveBeenCalled();
    // The operator's second one does end it.
    process.emit('SIGTERM', 'SIGTERM');
    expect(lines.at(-1)).toMatchObject({ event: 'sweep_stopped', signal: 'SIGTERM' });
  } finally {
    stop.dispose();
  }
});

it('a second SIGINT ends the job at once, saying its claims lapse', () => {
  vi.spyOn(process, 'kill').mockImplementation(() => true);
  const lines: Record<string, unknown>[] = [];
  const stop = stopSignal({ handleSignals: true, signal: undefined }, (line) => lines.push(line));
  try {
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGINT', 'SIGINT');
    expect(lines).toEqual([
      { event: 'sweep_stopping', signal: 'SIGINT' },
      {
        event: 'sweep_stopped',
        signal: 'SIGINT',
        reason: 'a second SIGINT: ended at once; could not release claims; they lapse with the lease',
      },
    ]);
  } finally {
    stop.dispose();
  }
});
