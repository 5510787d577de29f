/**
 * An action whose `fulfil` throws, on SQLite and PostgreSQL: nothing is marked, the attempt stays
 * pending for the next try, and the operator's log says why, from the landing and from the sweep:
 * the action's own error (its name and message, redacted as every logged error is), beside the
 * attempt and the action, not only "the action failed".
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import type { ActionDefinition } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { effectCounts, startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

class PayoutConflict extends Error {
  override name = 'PayoutConflict';
}

const throwing: ActionDefinition<unknown> = {
  name: 'grant_badge',
  operationSensitivity: 'normal',
  successPath: '/done/badge',
  fulfil: () => {
    throw new PayoutConflict('payout account already linked to another user');
  },
};

describeEachAppStore('a fulfil that throws', (_store, storeOptions) => {
  let app: TestApp;
  const seen = newSeen();
  beforeAll(async () => {
    app = await startTestApp({ ...(await storeOptions()), kit: { actions: [throwing] } });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The log lines naming the session that carry the action's own error. */
  const linesWithTheCause = (sessionId: string) =>
    app.logs
      .map((line) => JSON.parse(line) as { level: string; sessionId?: string; action?: string; err?: unknown })
      .filter((line) => line.sessionId === sessionId && JSON.stringify(line.err ?? null).includes('already linked'));

  it('is logged with its own error by the landing and by the sweep; nothing is marked', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await alice.start('grant_badge');
    const row = await app.latestAttempt();
    await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });

    expect((await alice.landFor(row.sessionId, row.state)).status).toBe(500);
    expect(linesWithTheCause(row.sessionId)).toEqual([
      expect.objectContaining({
        level: 'error',
        action: 'grant_badge',
        err: expect.objectContaining({
          name: 'PayoutConflict',
          message: 'payout account already linked to another user',
        }),
      }),
    ]);

    const report = await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 }, { owner: 'logged' });
    expect(report.errors).toBe(1);
    expect(linesWithTheCause(row.sessionId)).toHaveLength(2);
    expect(await app.attempt(row.sessionId)).toMatchObject({ outcome: 'pending' });
    expect((await effectCounts(app)).get(row.sessionId)).toBeUndefined();
  });
});
