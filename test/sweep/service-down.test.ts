/**
 * A run whose first reads all go unanswered (the service down, answering 503) reads no more: the
 * rest of the backlog would only spend reads, each retried by the client too, that none can answer.
 * Before, a run read every due attempt (twice each with the default retry), thousands a run on a
 * backlog. The attempts not read are handed back and read by the next run; one answered read, even
 * among failures, keeps the run reading. Same suite on every store.
 */
import { describe, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { readAnswers } from '../../middleware/sweep/read-answers.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { VerifyClient } from '../../middleware/types.ts';
import { describeEachStore } from '../support/stores.ts';
import { sweepDeps, useSweepEmulator, verifiedAttempts } from '../support/sweep-bench.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const emu = useSweepEmulator();

describeEachStore('a run on a service that answers no read', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('stops after its first 2 × concurrency reads (at least 10) went unanswered, hands the rest back, and the next run reads them', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 30);
    const deps = sweepDeps(h, h.store, suite.client, 'sweep');
    await emu.control.injectFaults({ statusFailures: 1000 });
    const before = (await emu.control.stats()).statusReads;
    const down = await runSweep(deps, { concurrency: 4 });
    expect(down).toMatchObject({
      claimed: 30,
      stoppedBy: 'service_unreachable',
      serviceReachable: false,
      fulfilled: 0,
    });
    // The four in flight when the tenth failed finish; the rest are handed back unread.
    expect(down.reads).toBeGreaterThanOrEqual(10);
    expect(down.reads).toBeLessThanOrEqual(13);
    expect(down.released).toBe(30 - down.reads);
    // Each read tried twice (statusReadAttempts 2): 60 requests before, when every attempt was read.
    expect((await emu.control.stats()).statusReads - before).toBe(2 * down.reads);

    await emu.control.injectFaults({ statusFailures: 0 });
    const up = await runSweep(deps, { concurrency: 4 });
    expect(up).toMatchObject({ claimed: 30 - down.reads, fulfilled: 30 - down.reads, stoppedBy: null });
    expect(await h.countEffects()).toBe(30 - down.reads);
  });

  it('keeps reading once one read was answered, whatever fails after it', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 20);
    const deps = sweepDeps(h, h.store, suite.client, 'sweep');
    // Every read fails but the first.
    const run = await runSweep({ ...deps, client: failingAfter(suite.client, 1) }, { concurrency: 1 });
    expect(run).toMatchObject({
      claimed: 20,
      reads: 20,
      fulfilled: 1,
      errors: 19,
      stoppedBy: null,
      serviceReachable: true,
    });
  });
});

/** The client, whose status reads after the first `n` fail as the service being unreachable. */
function failingAfter(client: VerifyClient, n: number): VerifyClient {
  let reads = 0;
  return {
    createSession: (input, key) => client.createSession(input, key),
    close: () => client.close(),
    getSession: async (sessionId) => {
      reads++;
      if (reads > n) throw new KitError(KitErrorCode.ServiceUnavailable, 'The verification service answered 503.');
      return client.getSession(sessionId);
    },
  };
}

describe('the threshold', () => {
  it('is twice the concurrency, at least 10', () => {
    const down = new KitError(KitErrorCode.ServiceUnavailable, 'down');
    for (const [concurrency, enough] of [
      [1, 10],
      [5, 10],
      [16, 32],
    ] as const) {
      const answers = readAnswers(concurrency);
      for (let i = 1; i < enough; i++) answers.failed(down);
      expect(answers.nothingAnswers()).toBe(false);
      answers.failed(down);
      expect(answers.nothingAnswers()).toBe(true);
    }
  });
});
