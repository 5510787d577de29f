/**
 * The PostgreSQL store's reads for support screens and its retention: what is kept, for how long.
 * Retention takes its rows with SKIP LOCKED, so sweeps on several instances share the work.
 */
import type { Pool, QueryResultRow } from 'pg';
import { COLUMNS, nullableNumber, toAttempt, type AttemptRow } from './postgres-rows.ts';
import type { AttemptQuery, AttemptRecord, RetentionBatch, RetentionResult, VerifyStore } from './types.ts';

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
    WHERE start_seq IN (SELECT a.start_seq FROM verify_kit_attempts a
      WHERE ${SETTLED_BEFORE} AND a.redacted_at IS NULL LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  // The delivered outcome events go with their attempts.
  delete: `WITH doomed AS (
      SELECT a.session_id FROM verify_kit_attempts a WHERE ${SETTLED_BEFORE} LIMIT $2 FOR UPDATE SKIP LOCKED),
    events AS (DELETE FROM verify_kit_outcome_events WHERE session_id IN (SELECT session_id FROM doomed))
    DELETE FROM verify_kit_attempts WHERE session_id IN (SELECT session_id FROM doomed)`,
} as const;

function toRecord(row: RecordRow): AttemptRecord {
  return { ...toAttempt(row), outcomeSource: row.outcome_source, redactedAt: nullableNumber(row.redacted_at) };
}

export function postgresHousekeeping(pool: Pool, ready: Promise<void>): Housekeeping {
  const query = async <Row extends object>(name: keyof typeof SQL, values: unknown[]) => {
    await ready;
    return pool.query<Row & QueryResultRow>({ name: `verify_kit_housekeeping_${name}`, text: SQL[name], values });
  };
  return {
    async findAttemptBySessionId(sessionId) {
      const { rows } = await query<RecordRow>('bySession', [sessionId]);
      return rows[0] === undefined ? undefined : toRecord(rows[0]);
    },
    async listAttempts(q: AttemptQuery) {
      const values = [q.userRef ?? null, q.outcome ?? null, q.createdFrom ?? null, q.createdBefore ?? null, q.limit];
      const { rows } = await query<RecordRow>('list', values);
      return rows.map(toRecord);
    },
    async applyRetention(batch: RetentionBatch): Promise<RetentionResult> {
      await ready;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const redact = { name: 'verify_kit_redact', text: SQL.redact };
        const redacted = await client.query({ ...redact, values: [batch.redactBefore, batch.limit, batch.now] });
        const remove = { name: 'verify_kit_delete', text: SQL.delete };
        const deleted = await client.query({ ...remove, values: [batch.deleteBefore, batch.limit] });
        await client.query('COMMIT');
        return { redacted: redacted.rowCount ?? 0, deleted: deleted.rowCount ?? 0 };
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
  };
}
