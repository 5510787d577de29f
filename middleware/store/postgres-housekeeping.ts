/**
 * The PostgreSQL store's reads for support screens and its retention: what is kept, for how long.
 * Retention takes its rows with FOR UPDATE SKIP LOCKED, so two sweeps never wait on each other.
 */
import type { Pool } from 'pg';
import { COLUMNS, nullableNumber, toAttempt, type AttemptRow } from './postgres-rows.ts';
import type { AttemptQuery, AttemptRecord, RetentionBatch, VerifyStore } from './types.ts';

type Housekeeping = Pick<VerifyStore, 'findAttemptBySessionId' | 'listAttempts' | 'applyRetention'>;

interface RecordRow extends AttemptRow {
  outcome_source: AttemptRecord['outcomeSource'];
  redacted_at: string | null;
}

const RECORD = `SELECT ${COLUMNS.replace(/(\w+)/g, 'a.$1')}, a.redacted_at, e.source AS outcome_source
  FROM verify_kit_attempts a LEFT JOIN verify_kit_outcome_events e ON e.session_id = a.session_id`;

/** Settled, finished before the cut-off ($1), and with no outcome event still waiting for delivery. */
const SETTLED_BEFORE = `a.outcome <> 'pending' AND a.finished_at < $1 AND NOT EXISTS (
  SELECT 1 FROM verify_kit_outcome_events w WHERE w.session_id = a.session_id AND w.delivered_at IS NULL)`;

const SQL = {
  bySession: `${RECORD} WHERE a.session_id = $1`,
  list: `${RECORD}
    WHERE ($1::text IS NULL OR a.user_ref = $1) AND ($2::text IS NULL OR a.outcome = $2)
      AND ($3::bigint IS NULL OR a.created_at >= $3) AND ($4::bigint IS NULL OR a.created_at < $4)
    ORDER BY a.created_at DESC, a.start_seq DESC LIMIT $5`,
  redact: `UPDATE verify_kit_attempts SET params = 'null', destination = NULL, redacted_at = $3
    WHERE state IN (SELECT a.state FROM verify_kit_attempts a
      WHERE ${SETTLED_BEFORE} AND a.redacted_at IS NULL LIMIT $2 FOR UPDATE OF a SKIP LOCKED)`,
  remove: `WITH doomed AS (
      SELECT a.session_id FROM verify_kit_attempts a WHERE ${SETTLED_BEFORE} LIMIT $2 FOR UPDATE OF a SKIP LOCKED),
    events AS (DELETE FROM verify_kit_outcome_events e USING doomed d WHERE e.session_id = d.session_id)
    DELETE FROM verify_kit_attempts a USING doomed d WHERE a.session_id = d.session_id`,
} as const;

function toRecord(row: RecordRow): AttemptRecord {
  return { ...toAttempt(row), outcomeSource: row.outcome_source, redactedAt: nullableNumber(row.redacted_at) };
}

export function postgresHousekeeping(pool: Pool, ready: Promise<void>): Housekeeping {
  const query = async (name: keyof typeof SQL, values: unknown[]) => {
    await ready;
    return pool.query<RecordRow>({ name: `verify_kit_${name}`, text: SQL[name], values });
  };
  return {
    async findAttemptBySessionId(sessionId) {
      const { rows } = await query('bySession', [sessionId]);
      return rows[0] === undefined ? undefined : toRecord(rows[0]);
    },
    async listAttempts(q: AttemptQuery) {
      const values = [q.userRef ?? null, q.outcome ?? null, q.createdFrom ?? null, q.createdBefore ?? null, q.limit];
      return (await query('list', values)).rows.map(toRecord);
    },
    async applyRetention(batch: RetentionBatch) {
      // Two statements, each its own transaction: a crash between them loses nothing (the next run repeats).
      const redacted = await query('redact', [batch.redactBefore, batch.limit, batch.now]);
      const deleted = await query('remove', [batch.deleteBefore, batch.limit]);
      return { redacted: redacted.rowCount ?? 0, deleted: deleted.rowCount ?? 0 };
    },
  };
}
