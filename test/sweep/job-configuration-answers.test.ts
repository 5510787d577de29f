/**
 * What the sweep job calls of the configuration (the kit factory, a ready kit's runSweep, the
 * closes of what the factory built) is the integrator's code. A KitError it throws naming a phone
 * number is written in the job's output with the number masked, as the kit logs every other error
 * of the integrator's code; a runSweep answering something that is no report fails the run (exit
 * 3), never reads as "the service could not be reached" (2) or a run that went well (0).
 */
import { expect, it } from 'vitest';
import { KitError } from '../../middleware/errors.ts';
import { runSweepJob, SweepJobExitCode, type SweepJobKit } from '../../middleware/sweep/sweep-job.ts';

const NUMBER = '+15550001111';
const refusal = () => new KitError('hook_failed', `no route for ${NUMBER}`);

async function job(options: Partial<Parameters<typeof runSweepJob>[0]>): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const print = (line: string) => void lines.push(line);
  const code = await runSweepJob({ argv: ['--once'], env: {}, print, handleSignals: false, ...options } as never);
  return { code, lines };
}

const readyKit = (over: Partial<SweepJobKit>): SweepJobKit => ({
  runSweep: () => Promise.resolve({ serviceReachable: true }) as never,
  startSweepWorker: () => ({ stop: () => Promise.resolve() }) as never,
  store: { releaseClaims: () => Promise.resolve(0), close: () => Promise.resolve() },
  close: () => Promise.resolve(),
  ...over,
});

it.each([
  [
    'a ready kit whose runSweep rejects (sweep_failed)',
    { kit: readyKit({ runSweep: () => Promise.reject(refusal()) }) },
  ],
  ['a kit factory that rejects (sweep_config_error)', { kit: () => Promise.reject(refusal()) }],
  [
    "a built kit's store whose close rejects (sweep_close_failed)",
    {
      kit: () =>
        readyKit({ store: { releaseClaims: () => Promise.resolve(0), close: () => Promise.reject(refusal()) } }),
    },
  ],
])('%s: the number is masked in the job output', async (_name, options) => {
  const { lines } = await job(options);
  const output = lines.join('\n');
  expect(output).toContain('no route for ••\u00a011');
  expect(output).not.toContain(NUMBER);
});

it.each([{}, null, { serviceReachable: 'yes' }])('a runSweep answering %j: the run failed, exit 3', async (answer) => {
  const { code, lines } = await job({ kit: readyKit({ runSweep: () => Promise.resolve(answer) as never }) });
  expect({ code, lines }).toEqual({
    code: SweepJobExitCode.SweepFailed,
    lines: [expect.stringContaining('"event":"sweep_failed"')],
  });
});
