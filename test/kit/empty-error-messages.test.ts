/**
 * Node's connect to a host name with two addresses (`localhost` on a dual-stack machine, a database
 * host with an IPv4 and an IPv6 record) fails with an AggregateError whose message is empty: the
 * sweep job's `sweep_failed` line and the kit's log lines said nothing of why. An empty message is
 * now told by the error's code and the errors it gathers, each redacted as any message is.
 */
import { describe, expect, it } from 'vitest';
import { rememberSecret } from '../../middleware/errors.ts';
import { describeError } from '../../middleware/logger.ts';
import { runSweepJob, SweepJobExitCode, type SweepJobKit } from '../../middleware/sweep/sweep-job.ts';

const SECRET = 'dual-stack-secret-0123456789';

/** As node's net module builds it when every address of a host name refused the connection. */
function dualStackRefusal(): Error {
  const error = new AggregateError(
    [new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')],
    '',
  );
  Object.assign(error, { code: 'ECONNREFUSED' });
  return error;
}

describe('an error with an empty message', () => {
  it("node's dual-stack connect refusal is described by its code and both addresses' errors", () => {
    expect(describeError(dualStackRefusal())).toEqual({
      name: 'AggregateError',
      message: 'ECONNREFUSED: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    });
  });

  it("gathering many errors, it quotes three and counts the rest; a kit's client secret among them is redacted", () => {
    rememberSecret(SECRET);
    const errors = [new Error(`refused by ${SECRET}`), ...Array.from({ length: 5 }, (_, i) => new Error(`e${i}`))];
    const { message } = describeError(new AggregateError(errors, ''));
    expect(message).toBe('refused by [redacted]; e0; e1; 3 more');
  });

  it('a sweep job whose run fails so prints a sweep_failed line that says why, exit 3', async () => {
    const lines: string[] = [];
    const kit: SweepJobKit = {
      runSweep: () => Promise.reject(dualStackRefusal()),
      startSweepWorker: () => ({ owner: 'o', running: false, runs: 0, lastReport: undefined, stop: async () => {} }),
      store: { releaseClaims: async () => 0, close: async () => {} },
      close: async () => {},
    };
    const code = await runSweepJob({
      kit,
      argv: ['--once'],
      env: {},
      print: (line) => void lines.push(line),
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.SweepFailed);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        event: 'sweep_failed',
        error: {
          name: 'AggregateError',
          message: 'ECONNREFUSED: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
        },
      },
    ]);
  });
});
