/**
 * The PostgreSQL store's outcome outbox: the event an outcome writes in its own transaction, and
 * the leases (FOR UPDATE SKIP LOCKED) that hand undelivered events to `onOutcome` (outcomes.ts
 * delivers them, not the store).
 */
import type { PoolClient } from 'pg';
import { query, queryOn, type PostgresDb } from './postgres-query.ts';
import { fromAttemptJson, type AttemptJsonRow } from './postgres-rows.ts';
import type { ClaimOutcomeEventsOptions, OutcomeRecording, StoredOutcomeEvent, VerifyStore } from '../types.ts';

type Outbox = Pick<VerifyStore<PoolClient>, 'claimOutcomeEvents' | 'markOutcomeEventDelivered' | 'retryOutcomeEvent'>;

interface EventRow {
  event_id: string;
  session_id: string;
  outcome: StoredOutcomeEvent['outcome'];
  source: StoredOutcomeEvent['source'];
  occurred_at: string;
  deliveries: number;
}

/** The outbox row of an outcome, written in the transaction that records the outcome. */
export async function recordEvent(
  client: PoolClient,
  event: OutcomeRecording | undefined,
  sessionId: string,
  outcome: StoredOutcomeEvent['outcome'],
  now: number,
): Promise<string[]> {
  if (event === undefined) return [];
  const { rows } = await queryOn<{ event_id: string }>(client, 'insertEvent', [sessionId, outcome, event.source, now]);
  return rows.map((row) => String(row.event_id)); // INSERT ... RETURNING: the one new event
}

/** Leases due undelivered events (counting the delivery), each with its attempt, oldest first. */
async function claimEvents(db: PostgresDb, o: ClaimOutcomeEventsOptions): Promise<StoredOutcomeEvent[]> {
  const ids = o.eventIds === undefined ? null : o.eventIds.map(Number);
  const { rows } = await query<EventRow>(db, 'claimEvents', [o.owner, o.now + o.leaseMs, o.now, o.limit, ids]);
  if (rows.length === 0) return [];
  const attempts = (await query<AttemptJsonRow>(db, 'bySessions', [rows.map((r) => r.session_id)])).rows.map((row) =>
    fromAttemptJson(row.attempt),
  );
  const bySessionId = new Map(attempts.map((attempt) => [attempt.sessionId, attempt]));
  return rows
    .map((row) => ({
      eventId: String(row.event_id),
      outcome: row.outcome,
      source: row.source,
      occurredAt: Number(row.occurred_at),
      deliveries: row.deliveries,
      // Never undefined: attempts are purged only together with their events.
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
      attempt: bySessionId.get(row.session_id)!,
    }))
    .sort((a, b) => Number(a.eventId) - Number(b.eventId));
}

export function postgresOutbox(db: PostgresDb): Outbox {
  return {
    claimOutcomeEvents: (options) => claimEvents(db, options),
    async markOutcomeEventDelivered(eventId, owner, now) {
      await query(db, 'eventDelivered', [Number(eventId), owner, now]);
    },
    async retryOutcomeEvent(eventId, owner, nextAttemptAt) {
      await query(db, 'eventRetry', [Number(eventId), owner, nextAttemptAt]);
    },
  };
}
