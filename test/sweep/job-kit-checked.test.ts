/**
 * runSweepJob's kit factory is the integrator's code: what it resolves with is outside the kit's
 * trust too. A factory that forgot its `return` (undefined), or returned the kit's options instead
 * of a kit, ends the job as a configuration error (exit 1, a `sweep_config_error` line), never a
 * rejection of runSweepJob (which in `process.exitCode = await runSweepJob(...)`, the documented
 * job body, is an uncaught error with a stack). A wrong `stopTimeoutMs` is a configuration error too.
 */
import { describe, expect, it } from 'vitest';
import { runSweepJob, type SweepJobKit } from '../../middleware/index.ts';

async function job(result: unknown, mode: '--once' | '--loop') {
  const lines: string[] = [];
  const ctl = new AbortController();
  const running = runSweepJob({
    kit: () => result as SweepJobKit,
    argv: [mode],
    env: {},
    print: (line) => lines.push(line),
    handleSignals: false,
    signal: ctl.signal,
    stopTimeoutMs: 500,
  });
  // --loop ends on the signal; a job that already failed ignores it.
  setTimeout(() => ctl.abort(), 200).unref();
  const outcome = await running.then(
    (code) => ({ code }),
    (error: unknown) => ({ rejected: String(error) }),
  );
  return { outcome, lines };
}

describe('runSweepJob with a kit that is not a kit', () => {
  for (const [label, value] of [
    ['undefined (a factory without return)', undefined],
    ['the options object instead of a kit', { store: {}, actions: {} }],
  ] as const) {
    for (const mode of ['--once', '--loop'] as const) {
      it(`${label}, ${mode}: exits 1 (not a rejection) with a line saying what the factory gave`, async () => {
        const { outcome, lines } = await job(value, mode);
        expect(outcome).toEqual({ code: 1 });
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0]!)).toMatchObject({
          event: 'sweep_config_error',
          message: expect.stringContaining('the kit factory gave something that is not a verification kit'),
        });
      });
    }
  }
});

describe('runSweepJob with a wrong stopTimeoutMs', () => {
  it('exits 1 with a sweep_config_error line naming it, before it builds any kit', async () => {
    const lines: string[] = [];
    let built = 0;
    const code = await runSweepJob({
      kit: () => {
        built += 1;
        return undefined as unknown as SweepJobKit;
      },
      argv: ['--loop'],
      env: {},
      print: (line) => lines.push(line),
      handleSignals: false,
      stopTimeoutMs: 1.5,
    });
    expect(code).toBe(1);
    expect(built).toBe(0);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      event: 'sweep_config_error',
      message: expect.stringContaining('`stopTimeoutMs` must be a whole number of milliseconds'),
    });
  });
});
