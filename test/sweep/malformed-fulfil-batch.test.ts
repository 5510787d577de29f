/**
 * A store of the app's own is the integrator's code, outside the kit's trust for liveness: a
 * `fulfilBatch` that answers no list of results (an async one that forgot its `return`), or a
 * list with holes, fails the fulfilments it was given, as a store error does (a result that throws
 * when read, the fulfilment it answers). It never throws where nothing catches it (an unhandled
 * rejection ends a Node process) and never leaves a queued fulfilment unsettled (the sweep would
 * wait on it until its time budget, and past it).
 */
import { expect, it } from 'vitest';
import { commitEach, groupCommitter } from '../../middleware/fulfil/group-commit.ts';
import type { FulfilRequest, VerifyStore } from '../../middleware/store/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachStore } from '../support/stores.ts';
import { sweepDeps, useSweepEmulator, verifiedAttempts } from '../support/sweep-bench.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';
import { within } from '../support/wait-for.ts';

const emu = useSweepEmulator();
const unhandled = watchUnhandledRejections();

const request = (sessionId: string) =>
  ({ attempt: { sessionId }, effect: () => undefined, now: 1 }) as unknown as FulfilRequest<unknown>;
const answering = (answer: unknown) =>
  ({ fulfilBatch: async () => answer }) as unknown as Pick<VerifyStore<unknown>, 'fulfilBatch'>;
const outcomeOf = (fulfilment: Promise<unknown>) =>
  within(1000, fulfilment).then(
    () => 'resolved',
    (error: unknown) => `rejected: ${(error as Error).message}`,
  );

it.each([
  ['no list', undefined, 'fulfilBatch returned no list of results'],
  ['a list of nulls', [null, null], 'fulfilBatch returned too few results'],
  ['an empty list', [], 'fulfilBatch returned too few results'],
])(
  'a group whose fulfilBatch answers %s: each fulfilment is refused, none left waiting',
  async (_, answer, message) => {
    const committer = groupCommitter(answering(answer), { maxGroup: 10, parallel: 1 });
    const outcomes = await Promise.all(
      [committer.fulfil(request('ses_a')), committer.fulfil(request('ses_b'))].map(outcomeOf),
    );
    expect({ outcomes, unhandled: (await unhandled.settled()).map(String) }).toEqual({
      outcomes: [`rejected: ${message}`, `rejected: ${message}`],
      unhandled: [],
    });
  },
);

it('a group whose fulfilBatch answers a result that throws when read: that fulfilment is refused, the next answered', async () => {
  const lazy = {
    get ok(): boolean {
      throw new Error('lazy row not loaded');
    },
  };
  const answer = [lazy, { ok: true, result: { kind: 'fulfilled' } }];
  const committer = groupCommitter(answering(answer), { maxGroup: 10, parallel: 1 });
  const outcomes = await Promise.all(
    [committer.fulfil(request('ses_a')), committer.fulfil(request('ses_b'))].map(outcomeOf),
  );
  expect({ outcomes, unhandled: (await unhandled.settled()).map(String) }).toEqual({
    outcomes: ['rejected: lazy row not loaded', 'resolved'],
    unhandled: [],
  });
});

it("a landing's fulfilment alone, answered no list, is refused saying so", async () => {
  expect(await outcomeOf(commitEach(answering(undefined)).fulfil(request('ses_a')))).toBe(
    'rejected: fulfilBatch returned no list of results',
  );
});

describeEachStore('a sweep run whose store answers fulfilBatch with no list', (kind) => {
  const suite = useSweepSuite(emu, kind);
  it('ends within its time budget, counting the failed fulfilments, with nothing unhandled', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 2);
    const store = new Proxy(h.store, {
      get(object, key) {
        if (key === 'fulfilBatch') return async () => undefined;
        const value: unknown = Reflect.get(object, key, object);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
      },
    });
    const run = runSweep(sweepDeps(h, store, suite.client, 'sweep'), { timeBudgetMs: 500, owner: 'malformed-batch' });
    const report = await within(5000, run);
    expect({
      fulfilled: report.fulfilled,
      errors: report.errors,
      unhandled: (await unhandled.settled()).map(String),
    }).toEqual({
      fulfilled: 0,
      errors: 2,
      unhandled: [],
    });
  });
});
