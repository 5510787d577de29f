/**
 * A ready kit is the configuration's code: its runSweep may answer with a value `await` cannot even
 * look at (a revoked Proxy, an object whose `then` getter throws). The job still resolves with its
 * exit code, 3 (the sweep failed), after a `sweep_failed` line: runSweepJob rejected before, so a
 * job script awaiting it ended with Node's stack trace and exit 1, which says a configuration error.
 */
import { expect, it } from 'vitest';
import { runSweepJob, SweepJobExitCode, type SweepJobKit } from '../../middleware/sweep/sweep-job.ts';

function kitAnswering(answer: () => unknown): SweepJobKit {
  return {
    runSweep: () => answer() as never,
    startSweepWorker: () => ({ stop: () => Promise.resolve() }) as never,
    store: { releaseClaims: () => Promise.resolve(0), close: () => Promise.resolve() },
    close: () => Promise.resolve(),
  };
}

const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const thenThrows = () => ({
  get then(): never {
    throw new Error('then is not readable');
  },
});

it.each([
  ['a revoked Proxy', revoked],
  ['an object whose then getter throws', thenThrows],
])('a ready kit whose runSweep answers %s: exit 3 after a sweep_failed line', async (_name, answer) => {
  const lines: string[] = [];
  const code = await runSweepJob({
    kit: kitAnswering(answer),
    argv: ['--once'],
    env: {},
    print: (line) => lines.push(line),
    handleSignals: false,
  });
  expect(code).toBe(SweepJobExitCode.SweepFailed);
  expect(lines.map((line) => (JSON.parse(line) as { event: string }).event)).toEqual(['sweep_failed']);
});
