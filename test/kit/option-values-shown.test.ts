/**
 * The checks of whole-number options (hookTimeouts, the sweep's and the worker's settings, the
 * job's stopTimeoutMs) and of the SQLite store's `checkpoints` name the value they refuse. A phone
 * number given there by mistake is masked (`•• 56`), never repeated whole, and a value JSON cannot
 * write (a BigInt: `30000n` for 30000) is refused as any wrong value is, with `invalid_options`
 * naming the option, never a TypeError that names none.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  createVerificationKit,
  isKitError,
  KitErrorCode,
  type VerificationKitOptions,
} from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { runSweepJob } from '../../middleware/sweep/sweep-job.ts';

const store = createSqliteStore({ database: ':memory:' });
afterAll(async () => {
  await store.close();
});

const NUMBER = '+447400123456';
const options: VerificationKitOptions = {
  baseUrl: 'http://127.0.0.1:9',
  clientId: 'client-1',
  clientSecret: 'option-values-secret-7a6b5c',
  returnUrl: 'http://localhost:3000/verify/return',
  store,
  actions: [{ name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {} }],
  resolveUser: () => null,
};
const kit = createVerificationKit(options);
afterAll(async () => {
  await kit.close();
});

/** The message of the invalid_options error `act` throws or rejects with (it must). */
async function refusal(act: () => unknown): Promise<string> {
  let error: unknown;
  try {
    await act();
  } catch (thrown) {
    error = thrown;
  }
  expect(isKitError(error, KitErrorCode.InvalidOptions), String(error)).toBe(true);
  return (error as Error).message;
}

function expectMasked(message: string): void {
  expect(message).not.toContain('7400123456');
  expect(message).toContain('••\u00a056');
}

describe('a phone number given as a whole-number option', () => {
  it('hookTimeouts, the sweep, the worker: masked', async () => {
    const build = (extra: object) => () => createVerificationKit({ ...options, ...extra } as VerificationKitOptions);
    expectMasked(await refusal(build({ hookTimeouts: { fulfil: NUMBER } })));
    expectMasked(await refusal(build({ hookTimeouts: { fulfil: 447400123456 } })));
    expectMasked(await refusal(() => kit.runSweep({ batchSize: NUMBER } as never)));
    expectMasked(await refusal(() => kit.startSweepWorker({ intervalMs: NUMBER } as never)));
  });

  it("the job's stopTimeoutMs: masked in its sweep_config_error line", async () => {
    const lines: string[] = [];
    const code = await runSweepJob({
      kit,
      argv: ['--once'],
      env: {},
      print: (line) => lines.push(line),
      handleSignals: false,
      stopTimeoutMs: NUMBER as never,
    });
    expect(code).toBe(1);
    expectMasked(lines.join('\n'));
  });

  it("the SQLite store's checkpoints: not repeated", async () => {
    const message = await refusal(() => createSqliteStore({ database: ':memory:', checkpoints: NUMBER as never }));
    expect(message).not.toContain('7400123456');
    expect(
      await refusal(() => createSqliteStore({ database: ':memory:', checkpoints: 'onCommit' as never })),
    ).toContain('got "onCommit"');
  });
});

describe('a BigInt given as a whole-number option', () => {
  it('is refused with invalid_options naming the option', async () => {
    const build = () => createVerificationKit({ ...options, hookTimeouts: { fulfil: 30_000n } } as never);
    expect(await refusal(build)).toContain('`hookTimeouts.fulfil` must be an integer');
    expect(await refusal(() => kit.runSweep({ leaseMs: 120_000n } as never))).toContain('`leaseMs`');
    expect(await refusal(() => kit.startSweepWorker({ intervalMs: 60_000n } as never))).toContain('`intervalMs`');
    const lines: string[] = [];
    await runSweepJob({
      kit,
      argv: ['--once'],
      env: {},
      print: (line) => lines.push(line),
      handleSignals: false,
      stopTimeoutMs: 10_000n as never,
    });
    expect(lines.join('\n')).toContain('`stopTimeoutMs` must be a whole number');
  });
});
