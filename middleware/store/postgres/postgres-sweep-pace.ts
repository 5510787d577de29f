/** The sweep's shared pace in PostgreSQL: one row, locked, read and changed in one transaction. */
import { inTransaction, queryOn, type Commit, type PostgresDb } from './postgres-query.ts';
import type { SweepPace, VerifyStore } from '../types.ts';

/**
 * The pace is advisory (a crash that loses its last fraction of a second only resumes from a
 * slightly older rate), and it is written several times a second under load: its commits do not
 * wait for a disk flush, and the landings' commits do not queue behind one.
 */
const PACE_COMMIT: Commit = 'unflushed';

interface PaceRow {
  rate_per_second: number | null;
  limit_per_second: number | null;
  paused_until: string;
  cut_at: string;
  tokens: number;
  reads_granted: number;
  tokens_at: string;
}

function toPace(row: PaceRow): SweepPace {
  return {
    ratePerSecond: row.rate_per_second,
    limitPerSecond: row.limit_per_second,
    // BIGINT arrives as text.
    pausedUntil: Number(row.paused_until),
    cutAt: Number(row.cut_at),
    tokens: row.tokens,
    readsGranted: row.reads_granted,
    tokensAt: Number(row.tokens_at),
  };
}

export function postgresSweepPace(db: PostgresDb): Pick<VerifyStore, 'updateSweepPace'> {
  return {
    updateSweepPace: (apply) =>
      inTransaction(
        db,
        async (client) => {
          const { rows } = await queryOn<PaceRow>(client, 'lockSweepPace', []);
          const current = toPace(rows[0] as PaceRow);
          const next = apply(current);
          if (next === undefined) return current;
          const { ratePerSecond, limitPerSecond, pausedUntil, cutAt, tokens, tokensAt, readsGranted } = next;
          // Whole ms in BIGINT columns.
          const times = [pausedUntil, cutAt, tokensAt].map(Math.round);
          await queryOn(client, 'setSweepPace', [
            ratePerSecond,
            limitPerSecond,
            times[0],
            times[1],
            tokens,
            times[2],
            readsGranted,
          ]);
          return next;
        },
        PACE_COMMIT,
      ),
  };
}
