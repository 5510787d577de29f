/**
 * What the PostgreSQL store writes for the sweep (claims with FOR UPDATE SKIP LOCKED and a lease,
 * next checks, expiry) and for a failed verification. An outcome and its event share a transaction.
 */
import type { PoolClient } from 'pg';
import { recordEvent } from './postgres-outbox.ts';
import { inTransaction, query, queryOn, type PostgresDb } from './postgres-query.ts';
import { fromAttemptJson, type AttemptJsonRow } from './postgres-rows.ts';
import type { Attempt, ClaimOptions, NextCheck, OutcomeRecording, VerifyStore } from '../types.ts';

type SweepWrites = Pick<
  VerifyStore<PoolClient>,
  'recordFailure' | 'claimDueAttempts' | 'scheduleNextChecks' | 'releaseClaims' | 'expireAttempts'
>;

/** Marks a pending attempt failed, with its outcome event when one is asked for. */
async function fail(db: PostgresDb, sessionId: string, reason: string, now: number, event?: OutcomeRecording) {
  if (event === undefined) {
    await query(db, 'markFailed', [sessionId, reason, now]);
    return { eventIds: [] };
  }
  return inTransaction(db, async (client) => {
    const marked = await queryOn(client, 'markFailed', [sessionId, reason, now]);
    return { eventIds: marked.rowCount === 1 ? await recordEvent(client, event, sessionId, 'failed', now) : [] };
  });
}

/** Expires pending attempts older than `maxAgeMs` that no sweep holds, each with its outcome event. */
async function expire(db: PostgresDb, now: number, maxAgeMs: number, event?: OutcomeRecording): Promise<number> {
  if (event === undefined) return (await query(db, 'expire', [now, now - maxAgeMs])).rowCount ?? 0;
  return inTransaction(db, async (client) => {
    const { rows } = await queryOn<{ session_id: string }>(client, 'expire', [now, now - maxAgeMs]);
    for (const row of rows) await recordEvent(client, event, row.session_id, 'expired', now);
    return rows.length;
  });
}

/** Leases the most overdue pending attempts to `owner`; rows another sweep holds are skipped. */
async function claimDue(db: PostgresDb, o: ClaimOptions): Promise<Attempt[]> {
  const values = [o.owner, o.now + o.leaseMs, o.now, o.now - o.maxAgeMs, o.limit, o.platform ?? null];
  const { rows } = await query<AttemptJsonRow>(db, 'claimDue', values);
  // RETURNING keeps no order: most overdue first, as the sweep expects.
  return rows.map((r) => fromAttemptJson(r.attempt)).sort((a, b) => a.nextCheckAt - b.nextCheckAt);
}

/** Sets the next check of attempts `owner` still holds, and ends its lease on them (one statement). */
async function reschedule(db: PostgresDb, owner: string, checks: readonly NextCheck[]): Promise<void> {
  await query(db, 'reschedule', [owner, checks.map((c) => c.sessionId), checks.map((c) => c.nextCheckAt)]);
}

export function postgresSweepWrites(db: PostgresDb): SweepWrites {
  return {
    recordFailure: (sessionId, reason, now, event) => fail(db, sessionId, reason, now, event),
    claimDueAttempts: (claim) => claimDue(db, claim),
    async scheduleNextChecks(owner, checks) {
      if (checks.length > 0) await reschedule(db, owner, checks);
    },
    async releaseClaims(owner) {
      return (await query(db, 'release', [owner])).rowCount ?? 0;
    },
    expireAttempts: (now, maxAgeMs, event) => expire(db, now, maxAgeMs, event),
  };
}
