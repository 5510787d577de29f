/**
 * The SQLite store's reads for support screens and its retention: what is kept, for how long.
 */
import type { Database } from 'better-sqlite3';
import { toAttempt, type AttemptRow } from './sqlite-rows.ts';
import { HOUSEKEEPING_SQL, prepareAll, type HousekeepingStatements } from './sqlite-sql.ts';
import type { AttemptQuery, AttemptRecord, RetentionBatch, RetentionResult, VerifyStore } from '../types.ts';

type Housekeeping = Pick<VerifyStore, 'findAttemptBySessionId' | 'listAttempts' | 'applyRetention'>;

interface RecordRow extends AttemptRow {
  outcome_source: AttemptRecord['outcomeSource'];
  redacted_at: number | null;
}

function toRecord(row: RecordRow): AttemptRecord {
  return { ...toAttempt(row), outcomeSource: row.outcome_source, redactedAt: row.redacted_at };
}

/** Redacts, then deletes, one batch of settled attempts past their cut-offs. */
function retain(statements: HousekeepingStatements, o: RetentionBatch): RetentionResult {
  const redacted = statements.redact.run({ now: o.now, before: o.redactBefore, limit: o.limit }).changes;
  const sessionIds = statements.doomed.all({ before: o.deleteBefore, limit: o.limit }) as string[];
  for (const sessionId of sessionIds) {
    statements.deleteEvent.run(sessionId);
    statements.deleteAttempt.run(sessionId);
  }
  return { redacted, deleted: sessionIds.length };
}

export function sqliteHousekeeping(db: Database): Housekeeping {
  const statements = prepareAll(db, HOUSEKEEPING_SQL);
  statements.doomed.pluck(); // the delete step reads session ids, not rows
  const retention = db.transaction((o: RetentionBatch) => retain(statements, o));
  return {
    async findAttemptBySessionId(sessionId) {
      const row = statements.bySession.get(sessionId) as RecordRow | undefined;
      return row === undefined ? undefined : toRecord(row);
    },
    async listAttempts(query: AttemptQuery) {
      const rows = statements.list.all({
        userRef: query.userRef ?? null,
        outcome: query.outcome ?? null,
        createdFrom: query.createdFrom ?? null,
        createdBefore: query.createdBefore ?? null,
        limit: query.limit,
      }) as RecordRow[];
      return rows.map(toRecord);
    },
    async applyRetention(options) {
      return retention.immediate(options);
    },
  };
}
