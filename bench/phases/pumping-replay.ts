/**
 * The pumping phase's fidelity check (BENCH_ONLY=pumping-replay): the month's figures come from
 * in-memory counters; this replays a slice of the same month through the kit's real stores, SQLite
 * and PostgreSQL, as the start's check does (pumping-guard.ts: reserveSend judging in its step, with
 * the limits below which it may count in the reading's own (sureLimitsFor), and counting the text, or a refusal under the keys that refused it; recordDecision for a refusal,
 * releaseSend for a start the budgets refuse, attachSend once sent, markVerified when the code is entered, and the purge every five
 * minutes), on the events' own clock, and checks that every decision equals the
 * model's on the same events. A difference throws: the month's figures would not be the kit's.
 *
 * The slice: attack (a) (random numbers in one expensive country, addresses and accounts rotated)
 * from the month's first day to the end of the attack's day, 16 days: the 14 days the rules read
 * back (the 14-day maximum of verified texts), the launch day before them, so the slice is the
 * month's own run up to then and not a run from other counters, and the day of the attack.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { judge, keysRefusedBy, sureLimitsFor } from '../../middleware/pumping/pumping-decision.ts';
import { EarlierCountryCounts } from '../../middleware/pumping/pumping-earlier-counts.ts';
import { DEFAULT_THRESHOLDS, hourOf } from '../../middleware/pumping/pumping-rules.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { log, round1 } from '../measure.ts';
import { createTestDatabase } from '../postgres.ts';
import { keysOf, runPolicy, monthWith, SEED, START } from './pumping.ts';
import { Budgets } from './pumping-counters.ts';
import { attacks, DAY_MS, VERIFY_LAG_MS, type StartEvent } from './pumping-model.ts';

/** The attack replayed, and the day after its last (the slice ends there). */
const ATTACK = 'a';
const SLICE_END_DAY = 16;
/** As pumping-guard.ts: what it purges, how often, and how much at a time. */
const COUNTS_KEPT_HOURS = 15 * 24;
const DECISIONS_KEPT_MS = 30 * 24 * 3_600_000;
const PURGE_EVERY_MS = 5 * 60_000;
const PURGE_BATCH = 1000;

export interface ReplayFigures {
  slice: string;
  decisions: number;
  refused: number;
  /** Seconds each store took over the slice. */
  seconds: { sqlite: number; postgres: number };
}

/** The slice's starts, and the model's reasons for each (the kit's policy over the month, cut at the slice's end). */
export function slice(): { events: StartEvent[]; expected: string[][]; describe: string } {
  const attack = attacks(SEED, START).find((a) => a.shape.name === ATTACK)!;
  const month = monthWith(attack);
  const expected: string[][] = [];
  runPolicy('kit', month, attack.shape, (reasons) => expected.push(reasons));
  const end = START + SLICE_END_DAY * DAY_MS;
  const events = month.filter((e) => e.at < end);
  return {
    events,
    expected: expected.slice(0, events.length),
    describe: `attack (${ATTACK}), days 0-${SLICE_END_DAY - 1} of the month`,
  };
}

const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((r, i) => r === b[i]);

/**
 * As the guard: judged in the store's check, with the limits known before the reading, which counts
 * the text, or the refusal under the keys that refused it. The rules tripped.
 */
async function checkedInStore(
  store: PumpingStore,
  start: ReturnType<typeof keysOf>,
  at: number,
  earlier: EarlierCountryCounts,
): Promise<string[]> {
  const hour = hourOf(at);
  let reasons: string[] = [];
  const sure = sureLimitsFor(start, DEFAULT_THRESHOLDS, earlier.get(start.country, hour), at);
  await store.reserveSend({ keys: start.keys, address: start.address, hour, now: at, sure }, (reading) => {
    earlier.keep(start.country, hour, reading.counts[0]);
    reasons = judge(reading, start, DEFAULT_THRESHOLDS, at).reasons;
    return reasons.length === 0 ? { count: 'text' } : { count: 'refusal', keys: keysRefusedBy(start, reasons) };
  });
  return reasons;
}

/**
 * Replays the starts through one store; the first decision that differs from the model's, as a
 * sentence, or undefined when all are equal.
 */
export async function replayOn(
  store: PumpingStore,
  events: readonly StartEvent[],
  expected: readonly string[][],
): Promise<string | undefined> {
  const budgets = new Budgets();
  const earlier = new EarlierCountryCounts();
  const entered: { at: number; sessionId: string }[] = [];
  let next = 0;
  let purgeAt = 0;
  for (const [index, event] of events.entries()) {
    while (next < entered.length && entered[next]!.at <= event.at) await store.markVerified(entered[next++]!.sessionId);
    const start = keysOf(event);
    const hour = hourOf(event.at);
    const reasons = await checkedInStore(store, start, event.at, earlier);
    if (event.at >= purgeAt) {
      purgeAt = event.at + PURGE_EVERY_MS;
      await store.purgePumping({
        beforeHour: hour - COUNTS_KEPT_HOURS,
        decisionsBefore: event.at - DECISIONS_KEPT_MS,
        now: event.at,
        limit: PURGE_BATCH,
      });
    }
    const model = expected[index]!;
    if (!same(reasons, model)) {
      const when = new Date(event.at).toISOString();
      return (
        `start ${index} (${when}, ${event.country}, ${event.attack ? 'attack' : 'legitimate'}): ` +
        `store [${reasons.join(', ')}], model [${model.join(', ')}]`
      );
    }
    if (reasons.length > 0) {
      const { country, block, address, userRef } = start;
      await store.recordDecision({
        decidedAt: event.at,
        decision: 'refused',
        reasons,
        country,
        block,
        address,
        userRef,
      });
      continue;
    }
    if (!budgets.allows(event)) {
      await store.releaseSend({ keys: start.keys, hour });
      continue;
    }
    const sessionId = `replay-${index}`;
    await store.attachSend({ sessionId, keys: start.keys, hour });
    if (event.converts) entered.push({ at: event.at + VERIFY_LAG_MS, sessionId });
  }
  return undefined;
}

/** What one store's replay found: its seconds, and the first difference from the model (none: all equal). */
interface StoreReplay {
  seconds: number;
  difference: string | undefined;
}

/** Runs `replay` on a fresh SQLite file store. */
async function onSqlite(replay: (store: PumpingStore) => Promise<string | undefined>): Promise<StoreReplay> {
  const dir = mkdtempSync(join(tmpdir(), 'verify-kit-pumping-replay-'));
  const store = createSqliteStore({ database: join(dir, 'replay.sqlite') });
  try {
    return await timed(() => replay(store.pumping));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `replay` on the PostgreSQL store over a scratch database. */
async function onPostgres(replay: (store: PumpingStore) => Promise<string | undefined>): Promise<StoreReplay> {
  const database = await createTestDatabase({ max: 2 });
  const store = createPostgresStore({ pool: database.pool });
  try {
    await store.ready;
    return await timed(() => replay(store.pumping));
  } finally {
    await database.drop();
  }
}

async function timed(replay: () => Promise<string | undefined>): Promise<StoreReplay> {
  const began = performance.now();
  const difference = await replay();
  return { seconds: round1((performance.now() - began) / 1000), difference };
}

/** Replays the slice on both stores; throws, naming each store's first difference, unless every decision is equal on both. */
export async function pumpingReplayPhase(): Promise<ReplayFigures> {
  const { events, expected, describe } = slice();
  log(`pumping-replay: ${events.length} starts of ${describe} through the SQLite and the PostgreSQL store`);
  const replay = (store: PumpingStore) => replayOn(store, events, expected);
  const stores = { sqlite: await onSqlite(replay), postgres: await onPostgres(replay) };
  const differences = Object.entries(stores).flatMap(([name, { difference, seconds }]) => {
    log(`pumping-replay: ${name} ${difference === undefined ? 'equal' : 'DIFFERS'} (${seconds} s)`);
    return difference === undefined ? [] : [`the ${name} store differs from the model at ${difference}`];
  });
  if (differences.length > 0) throw new Error(`store replay (${describe}): ${differences.join('; ')}`);
  return {
    slice: describe,
    decisions: events.length,
    refused: expected.filter((r) => r.length > 0).length,
    seconds: { sqlite: stores.sqlite.seconds, postgres: stores.postgres.seconds },
  };
}

export function pumpingReplayLines(figures: ReplayFigures): string[] {
  return [
    `store replay: ${figures.decisions} decisions, all equal on sqlite and postgres ` +
      `(${figures.slice}; ${figures.refused} refused; ${figures.seconds.sqlite} s on SQLite, ${figures.seconds.postgres} s on PostgreSQL)`,
  ];
}

// Run alone: `npx tsx bench/phases/pumping-replay.ts` prints the line (or fails at the first difference).
if (process.argv[1]?.endsWith('pumping-replay.ts')) {
  pumpingReplayPhase().then(
    (figures) => process.stdout.write(`${pumpingReplayLines(figures).join('\n')}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
