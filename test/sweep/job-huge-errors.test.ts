/**
 * A configuration, a store or a callback is the integrator's code: its error may be megabytes long
 * (a message built from a response body, a dump of a table). The job prints one JSON line per event,
 * and a line of megabytes is one no log pipeline keeps whole (a container runtime splits it at
 * 16 KiB into fragments that are no JSON). Each text of a line is cut, saying how much was left
 * out, and never cut before it is redacted.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PRINTED_TEXT } from '../../middleware/printable-errors.ts';
import { runSweepJob, SweepJobExitCode, type SweepJobKit } from '../../middleware/sweep/sweep-job.ts';

const HUGE = 5_000_000;
const SECRET = 'huge-error-secret-0123456789';

function recorder() {
  const lines: string[] = [];
  return { lines, print: (line: string) => void lines.push(line) };
}

/** A kit whose run rejects with `error` (a ready kit: the configuration's own code). */
function failingKit(error: unknown): SweepJobKit {
  return {
    runSweep: () => Promise.reject(error),
    startSweepWorker: () => ({ owner: 'o', running: false, runs: 0, lastReport: undefined, stop: async () => {} }),
    store: { releaseClaims: async () => 0, close: async () => {} },
    close: async () => {},
  };
}

describe('runSweepJob with an error of megabytes', () => {
  it('a factory throwing one: one sweep_config_error line of a few kilobytes, saying how much was cut, exit 1', async () => {
    const out = recorder();
    const code = await runSweepJob({
      kit: () => {
        throw new Error('x'.repeat(HUGE));
      },
      argv: ['--once'],
      env: {},
      print: out.print,
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.ConfigError);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]!.length).toBeLessThan(MAX_PRINTED_TEXT + 200);
    const line = JSON.parse(out.lines[0]!) as { event: string; message: string };
    expect(line.event).toBe('sweep_config_error');
    expect(line.message).toBe(`${'x'.repeat(MAX_PRINTED_TEXT)}… (${HUGE - MAX_PRINTED_TEXT} more characters)`);
  });

  it('a run rejecting with one that holds a secret of the environment across the cut: sweep_failed, cut after redaction, exit 3', async () => {
    const out = recorder();
    // The secret starts 15 characters before the cut: cut first, its start would escape redaction.
    const message = `${'y'.repeat(MAX_PRINTED_TEXT - 15)}${SECRET}${'y'.repeat(HUGE)}`;
    const code = await runSweepJob({
      kit: failingKit(new Error(message)),
      argv: ['--once'],
      env: { VERIFY_CLIENT_SECRET: SECRET },
      print: out.print,
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.SweepFailed);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]!.length).toBeLessThan(MAX_PRINTED_TEXT + 200);
    const line = JSON.parse(out.lines[0]!) as { event: string; error: { message: string } };
    expect(line.event).toBe('sweep_failed');
    const kept = `${'y'.repeat(MAX_PRINTED_TEXT - 15)}[redacted]yyyyy`;
    expect(line.error.message).toBe(`${kept}… (${message.length - SECRET.length + 10 - kept.length} more characters)`);
    expect(out.lines[0]).not.toContain(SECRET.slice(0, 5));
  });
});
