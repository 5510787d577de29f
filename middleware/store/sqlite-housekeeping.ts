/**
 * The SQLite store's reads for support screens and its retention: what is kept, for how long.
 */
import type { Database } from 'better-sqlite3';
import { COLUMNS, toAttempt, type AttemptRow } from './sqlite-rows.ts';
import type { AttemptQuery, AttemptRecord, RetentionBatch, RetentionResult, VerifyStore } from './types.ts';

type Housekeeping = Pick<VerifyStore, 'findAttemptBySessionId' | 'listAttempts' | 'applyRetention'>;

interface RecordRow extends AttemptRow {
  outcome_source: AttemptRecord['outcomeSource'];
  redacted_at: number | null;
}

const RECORD = `SELECT ${COLUMNS.replace(/(\w+)/g, 'a.$1')}, a.redacted_at, e.source AS outcome_source
  FROM verify_kit_attempts a LEFT JOIN verify_kit_outcome_events e ON e.session_id = a.session_id`;

/** Settled, finished before the cut-off, and with no outcome event still waiting for delivery. */
const SETTLED_BEFORE = `a.outcome != 'pending' AND a.finished_at < @before AND NOT EXISTS (
  SELECT 1 FROM verify_kit_outcome_events w WHERE w.session_id = a.session_id AND w.delivered_at IS NULL)`;

function toRecord(row: RecordRow): AttemptRecord {
  return { ...toAttempt(row), outcomeSource: row.outcome_source, redactedAt: row.redacted_at };
}

export function sqliteHousekeeping(db: Database): Housekeeping {
  const bySession = db.prepare(`${RECORD} WHERE a.session_id = ?`);
  const list = db.prepare(
    `${RECORD}
     WHERE (@userRef IS NULL OR a.user_ref = @userRef) AND (@outcome IS NULL OR a.outcome = @outcome)
       AND (@createdFrom IS NULL OR a.created_at >= @createdFrom)
       AND (@createdBefore IS NULL OR a.created_at < @createdBefore)
     ORDER BY a.created_at DESC, a.start_seq DESC LIMIT @limit`,
  );
  const redact = db.prepare(
    `UPDATE verify_kit_attempts SET params = 'null', destination = NULL, redacted_at = @now
     WHERE start_seq IN (SELECT a.start_seq FROM verify_kit_attempts a
       WHERE ${SETTLED_BEFORE} AND a.redacted_at IS NULL LIMIT @limit)`,
  );
  const doomed = db
    .prepare(`SELECT a.session_id FROM verify_kit_attempts a WHERE ${SETTLED_BEFORE} LIMIT @limit`)
    .pluck();
  const deleteEvent = db.prepare('DELETE FROM verify_kit_outcome_events WHERE session_id = ?');
  const deleteAttempt = db.prepare('DELETE FROM verify_kit_attempts WHERE session_id = ?');

  const retention = db.transaction((o: RetentionBatch): RetentionResult => {
    const redacted = redact.run({ now: o.now, before: o.redactBefore, limit: o.limit }).changes;
    const sessionIds = doomed.all({ before: o.deleteBefore, limit: o.limit }) as string[];
    for (const sessionId of sessionIds) {
      deleteEvent.run(sessionId);
      deleteAttempt.run(sessionId);
    }
    return { redacted, deleted: sessionIds.length };
  });

  return {
    async findAttemptBySessionId(sessionId) {
      const row = bySession.get(sessionId) as RecordRow | undefined;
      return row === undefined ? undefined : toRecord(row);
    },
    async listAttempts(query: AttemptQuery) {
      const rows = list.all({
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
