/**
 * The SQLite store's outcome outbox: the event an outcome writes in its own transaction, and the
 * leases that hand undelivered events to `onOutcome` (outcomes.ts delivers them, not the store).
 */
import type { Database } from 'better-sqlite3';
import { toAttempt, type AttemptRow } from './sqlite-rows.ts';
import type { Statements } from './sqlite-sql.ts';
import type { ClaimOutcomeEventsOptions, OutcomeRecording, StoredOutcomeEvent, VerifyStore } from '../types.ts';

type Outbox = Pick<VerifyStore<Database>, 'claimOutcomeEvents' | 'markOutcomeEventDelivered' | 'retryOutcomeEvent'>;

interface EventRow {
  event_id: number;
  session_id: string;
  outcome: StoredOutcomeEvent['outcome'];
  source: StoredOutcomeEvent['source'];
  occurred_at: number;
  deliveries: number;
}

/** The outbox row of an outcome, written in the transaction that records the outcome. */
export function recordEvent(
  statements: Statements,
  event: OutcomeRecording | undefined,
  sessionId: string,
  outcome: StoredOutcomeEvent['outcome'],
  now: number,
): string[] {
  if (event === undefined) return [];
  const row = statements.insertEvent.get({ sessionId, outcome, source: event.source, now }) as { event_id: number };
  return [String(row.event_id)];
}

/** Leases due undelivered events (counting the delivery), each with its attempt. */
function claimEvents(statements: Statements, o: ClaimOutcomeEventsOptions): StoredOutcomeEvent[] {
  const rows = statements.claimEvents.all({
    owner: o.owner,
    leaseUntil: o.now + o.leaseMs,
    now: o.now,
    limit: o.limit,
    ids: o.eventIds === undefined ? null : JSON.stringify(o.eventIds.map(Number)),
  }) as EventRow[];
  return rows.map((row) => ({
    eventId: String(row.event_id),
    outcome: row.outcome,
    source: row.source,
    occurredAt: row.occurred_at,
    deliveries: row.deliveries,
    attempt: toAttempt(statements.bySession.get(row.session_id) as AttemptRow),
  }));
}

export function sqliteOutbox(db: Database, statements: Statements): Outbox {
  const claimTransaction = db.transaction((o: ClaimOutcomeEventsOptions) => claimEvents(statements, o));
  return {
    async claimOutcomeEvents(options) {
      return claimTransaction.immediate(options);
    },
    async markOutcomeEventDelivered(eventId, owner, now) {
      statements.eventDelivered.run({ eventId: Number(eventId), owner, now });
    },
    async retryOutcomeEvent(eventId, owner, nextAttemptAt) {
      statements.eventRetry.run({ eventId: Number(eventId), owner, nextAttemptAt });
    },
  };
}
