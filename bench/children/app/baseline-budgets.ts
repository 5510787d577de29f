/**
 * The hand-written integration's start budgets, as any integration that texts must keep them (a text
 * is money, and a typed number is where texts are pumped): per user, per number and per client
 * address, and the distinct numbers a user tries in a day, all spent before the service is called,
 * in one IMMEDIATE transaction that a spent budget rolls back whole, so a refused start spends
 * nothing. Numbers are keyed by an HMAC, never stored whole. The same budgets as the kit app's, and
 * as generous: counted, never hit. BENCH_BASELINE_BUDGETS=off leaves them out (the comparison with
 * an integration that limits nothing).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';

/** The kit app's generous budgets (bench/children/app/kit.ts): counted, never hit. */
const POINTS = 10_000_000;
const WINDOW_MS = 3_600_000;
const NUMBERS_WINDOW_MS = 24 * 3_600_000;

export interface BaselineBudgets {
  /** Spends every budget of one start, or none: false when one is spent. */
  spend(user: string, destination: string, address: string): boolean;
}

class Spent extends Error {}

export function baselineBudgets(db: Database): BaselineBudgets | undefined {
  if (process.env.BENCH_BASELINE_BUDGETS === 'off') return undefined;
  db.exec(`CREATE TABLE IF NOT EXISTS budgets (key TEXT PRIMARY KEY, spent INTEGER NOT NULL, window_ends_at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS tried_numbers (user_ref TEXT NOT NULL, number_key TEXT NOT NULL, until INTEGER NOT NULL,
      PRIMARY KEY (user_ref, number_key)) STRICT, WITHOUT ROWID;`);
  const spendOne = db.prepare(`INSERT INTO budgets (key, spent, window_ends_at) VALUES (@key, 1, @windowEndsAt)
    ON CONFLICT (key) DO UPDATE SET
      spent = CASE WHEN window_ends_at > @now THEN spent + 1 ELSE 1 END,
      window_ends_at = CASE WHEN window_ends_at > @now THEN window_ends_at ELSE excluded.window_ends_at END
    WHERE window_ends_at <= @now OR spent < @points`);
  // A number the user already tried in its window costs nothing more; a new one is counted.
  const tryNumber =
    db.prepare(`INSERT INTO tried_numbers (user_ref, number_key, until) VALUES (@user, @numberKey, @until)
    ON CONFLICT (user_ref, number_key) DO UPDATE SET until = excluded.until WHERE until <= @now`);
  const key = randomBytes(32);
  const spendAll = db.transaction((user: string, numberKey: string, address: string, now: number) => {
    const spend = (budgetKey: string, windowMs: number) => {
      if (spendOne.run({ key: budgetKey, windowEndsAt: now + windowMs, now, points: POINTS }).changes !== 1)
        throw new Spent();
    };
    spend(`user:${user}`, WINDOW_MS);
    spend(`number:${numberKey}`, WINDOW_MS);
    spend(`address:${address}`, WINDOW_MS);
    if (tryNumber.run({ user, numberKey, until: now + NUMBERS_WINDOW_MS, now }).changes === 1)
      spend(`numbers:${user}`, NUMBERS_WINDOW_MS);
  });
  return {
    spend(user, destination, address) {
      const numberKey = createHmac('sha256', key).update(destination).digest('base64url');
      try {
        spendAll.immediate(user, numberKey, address, Date.now());
        return true;
      } catch (error) {
        if (error instanceof Spent) return false;
        throw error;
      }
    },
  };
}
