/**
 * Store-level races of the SMS pumping check on PostgreSQL: a store on a scratch database whose
 * pool can hold back one check's count (the countPumping statement of the check whose keys hold a
 * given user key) until the test lets it go, and the guard's own decide (pumping-guard.ts, refuse
 * mode: judge; clean: a text with headroomOn's headroom; else a refusal under keysRefusedBy).
 */
import pg from 'pg';
import { headroomOn, judge, keysRefusedBy, type Verdict } from '../../middleware/pumping/pumping-decision.ts';
import type { StartKeys } from '../../middleware/pumping/pumping-keys.ts';
import type { PumpingThresholds } from '../../middleware/pumping/pumping-rules.ts';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { CountedByCheck, PumpingReading, PumpingStore } from '../../middleware/store/types.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';

export interface Gated {
  database: TestDatabase;
  store: PostgresStore;
  pumping: PumpingStore;
  /** Holds the next count of the check that names `userKey`; `go()` lets it run. */
  hold(userKey: string): { go: () => void };
  close(): Promise<void>;
}

export async function gatedStore(): Promise<Gated> {
  const database = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  const holds = new Map<string, Promise<void>>();
  const send = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    const c = config as { name?: string; values?: unknown[] } | string;
    if (typeof c === 'object' && c.name === 'verify_kit_countPumping') {
      const keys = (c.values?.[1] ?? []) as string[];
      for (const [user, held] of holds) {
        if (keys.includes(user)) {
          holds.delete(user);
          return held.then(() => send(config, ...rest));
        }
      }
    }
    return send(config, ...rest);
  }) as typeof pool.query;
  const store = createPostgresStore({ pool });
  await store.ready;
  return {
    database,
    store,
    pumping: store.pumping!,
    hold(userKey) {
      let go!: () => void;
      holds.set(userKey, new Promise<void>((resolve) => (go = resolve)));
      return { go };
    },
    async close() {
      await store.close();
      await pool.end().catch(() => {});
      await database.drop();
    },
  };
}

/** One check as the guard makes it (refuse mode), with every verdict its decide gave and what it last counted. */
export function guardCheck(
  pumping: PumpingStore,
  start: StartKeys,
  thresholds: PumpingThresholds,
  when: { hour: number; now: number },
) {
  const verdicts: Verdict[] = [];
  const answers: CountedByCheck[] = [];
  let decided!: () => void;
  const firstDecision = new Promise<void>((resolve) => (decided = resolve));
  const decide = (reading: PumpingReading): CountedByCheck => {
    const verdict = judge(reading, start, thresholds, when.now);
    verdicts.push(verdict);
    const answer: CountedByCheck =
      verdict.reasons.length === 0
        ? { count: 'text', headroom: headroomOn(reading, start, thresholds, when.now) }
        : { count: 'refusal', keys: keysRefusedBy(start, verdict.reasons) };
    answers.push(answer);
    decided();
    return answer;
  };
  const done = pumping.reserveSend({ keys: start.keys, address: start.address, ...when }, decide);
  return { done, firstDecision, verdicts, answers, last: () => answers[answers.length - 1] };
}

/** What the rules say on the counts as they are now (the serialised check's reading). */
export async function verdictNow(
  pumping: PumpingStore,
  start: StartKeys,
  thresholds: PumpingThresholds,
  when: { hour: number; now: number },
): Promise<Verdict> {
  const reading = await pumping.readPumping({ keys: start.keys, address: start.address, ...when });
  return judge(reading, start, thresholds, when.now);
}
