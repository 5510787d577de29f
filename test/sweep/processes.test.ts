/**
 * Sweep job PROCESSES sharing one SQLite file with in-process landings: exactly-once across
 * processes, and recovery after a sweep process is killed mid-batch.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { completeAttempt } from '../../middleware/fulfil/fulfil.ts';
import type { Attempt } from '../../middleware/store/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  countEffects,
  duplicateEffects,
  useSweepBench,
  grantAction,
  jsonLines,
  killSweepProcesses,
  spawnSweepProcess as sweepProcess,
  type Bench,
} from '../support/sweep-bench.ts';
import { waitFor } from '../support/wait-for.ts';
import { sqliteLease, sqliteLeaseOwners } from '../support/stores.ts';

const { emu, openBench } = useSweepBench();
let b: Bench;

afterEach(async () => {
  killSweepProcesses();
});

function jobEnv(worker: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SWEEP_DB: b.path,
    VERIFY_BASE_URL: emu.url,
    VERIFY_CLIENT_ID: CLIENT_ID,
    VERIFY_CLIENT_SECRET: CLIENT_SECRET,
    SWEEP_WORKER_NAME: worker,
    ...extra,
  };
}

describe('sweep processes on one SQLite file', () => {
  it('two sweep processes and a burst of concurrent landings fulfil each of 50 verified attempts exactly once', async () => {
    b = await openBench();
    const attempts = await b.createAttempts(50);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    // Slow each read so that the two processes and the landings really overlap: one process alone
    // needs about 2 s for the 50 (4 reads at a time), longer than the landings wait to begin.
    await emu.control.injectFaults({ statusDelayMs: 150 });
    // Both processes start up, then begin sweeping together: a slow start-up never leaves one alone.
    const start = join(b.dir, 'start');
    const settings = { SWEEP_BATCH_SIZE: '5', SWEEP_CONCURRENCY: '4', SWEEP_START_FILE: start };
    const one = sweepProcess(['--once'], jobEnv('sweeper-1', settings));
    const two = sweepProcess(['--once'], jobEnv('sweeper-2', settings));
    const ready = () => readdirSync(b.dir).filter((name) => name.startsWith('start.') && name.endsWith('.ready'));
    await waitFor(() => ready().length === 2, 30_000, 'both sweep processes to start up');
    writeFileSync(start, '');
    // The landings come in waves once both processes hold claims.
    const owners = () => sqliteLeaseOwners(b.store.db);
    await waitFor(() => owners() >= 2, 15_000, 'both sweep processes to hold claims');
    const landings = [];
    // From the end of the queue, where the sweepers (most overdue first) arrive last.
    for (const wave of [4, 3, 2, 1, 0]) {
      const slice = attempts.slice(wave * 10, wave * 10 + 10);
      const land = (a: Attempt) =>
        completeAttempt({ ...b.deps, actions: new Map([[a.action, grantAction('landing')]]) }, a, 'landing');
      landings.push(...(await Promise.all(slice.map(land))));
    }
    const [r1, r2] = await Promise.all([one.done, two.done]);
    expect(r1.code, r1.stderr).toBe(0);
    expect(r2.code, r2.stderr).toBe(0);
    const [l1] = jsonLines(r1.stdout);
    const [l2] = jsonLines(r2.stdout);

    expect(countEffects(b.store.db)).toBe(50);
    expect(duplicateEffects(b.store.db)).toEqual([]);
    for (const a of attempts) expect((await b.attempt(a.state)).outcome).toBe('fulfilled');
    // Every fulfilment is accounted for exactly once across the three parties.
    const byLanding = landings.filter((c) => c.kind === 'fulfilled' && c.firstTime).length;
    expect(Number(l1!.fulfilled) + Number(l2!.fulfilled) + byLanding).toBe(50);
    const rows = b.store.db.prepare('SELECT by, count(*) AS n FROM sweep_effects GROUP BY by').all() as {
      by: string;
      n: number;
    }[];
    const rowsBy = Object.fromEntries(rows.map((r) => [r.by, r.n]));
    expect(rowsBy['sweeper-1'] ?? 0).toBe(l1!.fulfilled);
    expect(rowsBy['sweeper-2'] ?? 0).toBe(l2!.fulfilled);
    expect(rowsBy['landing'] ?? 0).toBe(byLanding);
    // The race really happened: both processes claimed and read attempts, and the landings and
    // the processes both fulfilled some.
    expect(l1).toMatchObject({ claimed: expect.any(Number), reads: expect.any(Number) });
    expect(l2).toMatchObject({ claimed: expect.any(Number), reads: expect.any(Number) });
    expect(Math.min(Number(l1!.claimed), Number(l2!.claimed))).toBeGreaterThan(0);
    expect(Math.min(Number(l1!.reads), Number(l2!.reads))).toBeGreaterThan(0);
    expect(byLanding).toBeGreaterThan(0);
    expect(Number(l1!.fulfilled) + Number(l2!.fulfilled)).toBeGreaterThan(0);
    const contested =
      Number(l1!.alreadyFulfilled) +
      Number(l2!.alreadyFulfilled) +
      landings.filter((c) => c.kind === 'fulfilled' && !c.firstTime).length;
    console.info(
      `exactly-once race: sweeper-1 claimed ${l1!.claimed} fulfilled ${l1!.fulfilled}, sweeper-2 claimed ${l2!.claimed} fulfilled ${l2!.fulfilled}, landings ${byLanding}; found already fulfilled: ${contested}`,
    );
  });

  it('a sweep process killed mid-batch (SIGKILL) is followed by another that completes the work once its lease lapses', async () => {
    b = await openBench();
    const attempts = await b.createAttempts(6);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    await emu.control.injectFaults({ statusDelayMs: 10_000 }); // hold every read
    const readsBefore = (await emu.control.stats()).statusReads;
    const victim = sweepProcess(['--once'], jobEnv('victim', { SWEEP_LEASE_SECONDS: '1.5', SWEEP_CONCURRENCY: '2' }));
    await waitFor(
      async () => (await emu.control.stats()).statusReads >= readsBefore + 2,
      15_000,
      'the victim to be mid-batch',
    );
    victim.child.kill('SIGKILL');
    const killed = await victim.done;
    expect(killed.signal).toBe('SIGKILL');
    expect(countEffects(b.store.db)).toBe(0);
    // Its claims are still leased: nobody else may take them yet.
    for (const a of attempts) expect(sqliteLease(b.store.db, a.sessionId).owner).toMatch(/:\d+:/);
    expect((await runSweep(b.deps, { owner: 'too-early' })).claimed).toBe(0);

    await emu.control.injectFaults({ statusDelayMs: 0 });
    const leaseUntil = Math.max(...attempts.map((a) => sqliteLease(b.store.db, a.sessionId).until!));
    await new Promise((r) => setTimeout(r, Math.max(0, leaseUntil - Date.now() + 50)));
    const successor = sweepProcess(['--once'], jobEnv('successor'));
    const done = await successor.done;
    expect(done.code, done.stderr).toBe(0);
    expect(jsonLines(done.stdout)[0]).toMatchObject({ event: 'sweep', claimed: 6, fulfilled: 6, errors: 0 });
    expect(countEffects(b.store.db)).toBe(6);
    expect(duplicateEffects(b.store.db)).toEqual([]);
  });
});
