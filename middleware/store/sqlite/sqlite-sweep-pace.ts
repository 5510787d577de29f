/** The sweep's shared pace in SQLite: one row, read and changed in one IMMEDIATE transaction. */
import type { Database } from 'better-sqlite3';
import type { Statements } from './sqlite-sql.ts';
import type { SweepPace, VerifyStore } from '../types.ts';

interface PaceRow {
  rate_per_second: number | null;
  limit_per_second: number | null;
  paused_until: number;
  cut_at: number;
  tokens: number;
  reads_granted: number;
  tokens_at: number;
}

function toPace(row: PaceRow): SweepPace {
  return {
    ratePerSecond: row.rate_per_second,
    limitPerSecond: row.limit_per_second,
    pausedUntil: row.paused_until,
    cutAt: row.cut_at,
    tokens: row.tokens,
    readsGranted: row.reads_granted,
    tokensAt: row.tokens_at,
  };
}

export function sqliteSweepPace(db: Database, statements: Statements): Pick<VerifyStore, 'updateSweepPace'> {
  // IMMEDIATE: processes sharing the file queue on the write lock, so no change is lost.
  const change = db.transaction((apply: (current: SweepPace) => SweepPace | undefined): SweepPace => {
    const current = toPace(statements.sweepPace.get() as PaceRow);
    const next = apply(current);
    if (next === undefined) return current;
    // Whole ms in INTEGER columns.
    const times = { pausedUntil: Math.round(next.pausedUntil), cutAt: Math.round(next.cutAt) };
    statements.setSweepPace.run({ ...next, ...times, tokensAt: Math.round(next.tokensAt) });
    return next;
  });
  return {
    async updateSweepPace(apply) {
      return change.immediate(apply);
    },
  };
}
