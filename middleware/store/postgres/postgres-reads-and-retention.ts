/**
 * The PostgreSQL store's reads for support screens and its retention: what is kept, for how long.
 * Retention takes its rows with SKIP LOCKED, so sweeps on several instances share the work.
 */
import { inTransaction, query, queryOn, type PostgresDb } from './postgres-query.ts';
import { nullableNumber, toAttempt, type AttemptRow } from './postgres-rows.ts';
import type { AttemptQuery, AttemptRecord, RetentionBatch, RetentionResult, VerifyStore } from '../types.ts';

type Housekeeping = Pick<VerifyStore, 'findAttemptBySessionId' | 'listAttempts' | 'applyRetention'>;

interface RecordRow extends AttemptRow {
  outcome_source: AttemptRecord['outcomeSource'];
  redacted_at: string | null;
}

function toRecord(row: RecordRow): AttemptRecord {
  return { ...toAttempt(row), outcomeSource: row.outcome_source, redactedAt: nullableNumber(row.redacted_at) };
}

/** Redacts, then deletes, one batch of settled attempts past their cut-offs, in one transaction. */
function retain(db: PostgresDb, batch: RetentionBatch): Promise<RetentionResult> {
  return inTransaction(db, async (client) => {
    const redacted = await queryOn(client, 'redact', [batch.redactBefore, batch.limit, batch.now]);
    const deleted = await queryOn(client, 'delete', [batch.deleteBefore, batch.limit]);
    return { redacted: redacted.rowCount ?? 0, deleted: deleted.rowCount ?? 0 };
  });
}

export function postgresHousekeeping(db: PostgresDb): Housekeeping {
  return {
    async findAttemptBySessionId(sessionId) {
      const { rows } = await query<RecordRow>(db, 'housekeeping_bySession', [sessionId]);
      return rows[0] === undefined ? undefined : toRecord(rows[0]);
    },
    async listAttempts(q: AttemptQuery) {
      const values = [q.userRef ?? null, q.outcome ?? null, q.createdFrom ?? null, q.createdBefore ?? null, q.limit];
      const { rows } = await query<RecordRow>(db, 'housekeeping_list', values);
      return rows.map(toRecord);
    },
    applyRetention: (batch) => retain(db, batch),
  };
}
