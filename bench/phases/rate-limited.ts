/**
 * The sweep and the landings within the service's rate limit: the emulator answers 429 beyond R
 * status reads a second for the kit's client; two sweep processes work through N due attempts on
 * PostgreSQL while a steady stream of landings runs on a kit app on the same database and client
 * (so a landing's 429 slows those sweeps, as it would in production). The sweep processes take the
 * sweep job's CPU priority (nice 10, as `hosted-sms-verify-kit sweep` does). Measured: the
 * sweep's rate against 0.85 x (R minus the landings' reads), the share of reads answered 429, the
 * landings' p99 against their p99 with no sweep running, and every attempt fulfilled once.
 *
 * In rounds (`BENCH_RATE_LIMITED_ROUNDS`), after a warm-up that is not measured: each round the
 * landings run alone, then the sweeps work through the round's share of the attempts while the
 * landings go on, then the landings run alone again; the p99 ratio is judged on the median of the
 * rounds' ratios, as the other ratios are: one round's ratio ranged from 0.674 to 1.456 between
 * bench runs of the same code.
 *
 * Each round also runs the hand-written floor (bench/children/pg-sweep-floor-child.ts) in the
 * kit's place, then alone again (every other round the floor first): over the same sessions in a
 * database of its own, reading at the rate the kit's sweeps read and at the same CPU priority. It
 * shows what any sweep making those reads and writes costs the landings on this machine, beside
 * what the kit's costs them.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_SWEEP_NICE } from '../../middleware/sweep/sweep-job-args.ts';
import { config } from '../config.ts';
import type { Child } from '../ipc.ts';
import { log, round1 } from '../measure.ts';
import type { TestDatabase } from '../postgres.ts';
import { resetEmulator, seedVerifiedSessions, type SeedClient } from '../seed.ts';
import { landingStream } from './landing-stream.ts';
import { kitSweepDatabase, seedDueAttempts } from './pg-sweep.ts';
import { grantCounts, paceWrites } from './rate-limited-counts.ts';
import { figuresOf, type RateLimitedFigures, type RoundResult } from './rate-limited-figures.ts';
import { floorSweepers } from './rate-limited-floor.ts';
import { firstLandings, LANDER, landingApp, seedLandings, topUpLandings } from './rate-limited-landings.ts';
import { control, oneRound, type SweepCallArgs } from './rate-limited-rounds.ts';
import { login } from './sides.ts';

/** The attempts in `rounds` shares of (nearly) equal size, in order. */
function sharesOf<T>(items: T[], rounds: number): T[][] {
  return Array.from({ length: rounds }, (_, r) =>
    items.slice(Math.floor((r * items.length) / rounds), Math.floor(((r + 1) * items.length) / rounds)),
  );
}

/** What each kit sweep process is called with. */
const sweepArgs = (emulatorUrl: string, client: SeedClient, database: TestDatabase): SweepCallArgs => ({
  dbPath: '',
  emulatorUrl,
  clientId: client.clientId,
  secret: client.secret,
  databaseUrl: database.url,
  timeBudgetMs: config.sweepBudgetMs,
  nice: DEFAULT_SWEEP_NICE,
});

export async function rateLimitedPhase(emulatorUrl: string, client: SeedClient): Promise<RateLimitedFigures> {
  await resetEmulator(emulatorUrl);
  const t0 = performance.now();
  const sweepSessions = await seedVerifiedSessions(
    emulatorUrl,
    client,
    config.rateLimitedSize,
    (i) => `bench-rl-sweeper-${i}`,
    { concurrency: config.seedConcurrency },
  );
  const shares = sharesOf(sweepSessions, config.rateLimitedRounds);
  const { database, children } = await kitSweepDatabase(shares[0]!);
  const apps: Child[] = [];
  const floor = await floorSweepers(children.length).catch(async (error: unknown) => {
    await Promise.all(children.map((c) => c.stop()));
    await database.drop();
    throw error;
  });
  try {
    const side = await landingApp(emulatorUrl, client, database, apps);
    const landings = await seedLandings(emulatorUrl, side, database, firstLandings());
    const { cookie } = await login(side, LANDER);
    log(
      `rate-limited: seeded ${sweepSessions.length} + ${landings.length} sessions in ${Math.round(performance.now() - t0)} ms`,
    );
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: config.rateLimit });
    const args = sweepArgs(emulatorUrl, client, database);
    await landingStream(side, cookie, landings, config.rateLimitedLandings, sleep(config.rateLimitedWarmUpMs));
    const rounds: RoundResult[] = [];
    let lastUsed = 0;
    for (const [round, share] of shares.entries()) {
      // The first share was seeded with the database; each later one when its round begins.
      if (round > 0) await seedDueAttempts(database, share);
      await topUpLandings(emulatorUrl, side, database, landings, lastUsed);
      await database.pool.query('VACUUM ANALYZE bench_grants'); // the last round's grants
      await floor.seed(share, { emulatorUrl, clientId: client.clientId, secret: client.secret });
      // The seeding's dirty pages written now, not during whichever window comes next.
      await database.pool.query('CHECKPOINT');
      const floorFirstAt = round % 2 === 1 ? rounds.at(-1)?.floor.readsPerSecond : undefined;
      const before = landings.length;
      const r = await oneRound({ emulatorUrl, side, cookie, landings, children, args, database, floor }, floorFirstAt);
      lastUsed = before - landings.length;
      rounds.push(r);
      log(
        `rate-limited: round ${round + 1} of ${shares.length}: ${share.length} attempts; landings' p99 alone ` +
          `${r.alone.stream.p99} ms, with the sweeps ${r.withSweep.stream.p99} ms; limits learned ${JSON.stringify(r.learnedLimits)}; ` +
          `the floor at ${round1(r.floor.readsPerSecond)} reads/s: alone ${r.floor.alone.stream.p99} ms, beside it ${r.floor.withFloor.stream.p99} ms`,
      );
    }
    return figuresOf(rounds, children.length, await grantCounts(database), await paceWrites(database));
  } finally {
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: 0 }).catch(() => undefined);
    await Promise.all([...apps, ...children, ...floor.children].map((c) => c.stop()));
    await database.drop();
    await floor.database.drop();
  }
}
