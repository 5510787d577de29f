/**
 * What the SQLite store writes for the sweep (claims with a lease, next checks, expiry) and for a
 * failed verification. Each call that decides something is one IMMEDIATE transaction.
 */
import type { Database } from 'better-sqlite3';
import { recordEvent } from './sqlite-outbox.ts';
import { toAttemptFromValues } from './sqlite-rows.ts';
import type { Statements } from './sqlite-sql.ts';
import type { Attempt, ClaimOptions, NextCheck, OutcomeRecording, VerifyStore } from '../types.ts';

type SweepWrites = Pick<
  VerifyStore<Database>,
  'recordFailure' | 'claimDueAttempts' | 'scheduleNextChecks' | 'releaseClaims' | 'expireAttempts'
>;

/** Marks a pending attempt failed, with its outcome event. */
function fail(statements: Statements, sessionId: string, reason: string, now: number, event?: OutcomeRecording) {
  const marked = statements.markFailed.get({ sessionId, reason, now }) as { session_id: string } | undefined;
  return { eventIds: marked === undefined ? [] : recordEvent(statements, event, sessionId, 'failed', now) };
}

/** Expires pending attempts older than `maxAgeMs` that no sweep holds, each with its outcome event. */
function expire(statements: Statements, now: number, maxAgeMs: number, event?: OutcomeRecording): number {
  const expired = statements.expire.all({ now, maxCreatedAt: now - maxAgeMs }) as { session_id: string }[];
  for (const row of expired) recordEvent(statements, event, row.session_id, 'expired', now);
  return expired.length;
}

/** Leases the most overdue pending attempts to `owner` (inside an IMMEDIATE transaction), most overdue first. */
function claimDue(statements: Statements, o: ClaimOptions): Attempt[] {
  const leaseUntil = o.now + o.leaseMs;
  const rows = statements.dueToClaim.all({
    now: o.now,
    minCreatedAt: o.now - o.maxAgeMs,
    limit: o.limit,
    platform: o.platform ?? null,
  }) as unknown[][];
  const attempts = rows.map(toAttemptFromValues);
  for (const attempt of attempts) statements.lease.run(o.owner, leaseUntil, attempt.startSeq);
  return attempts;
}

/** Sets the next check of attempts `owner` still holds, and ends its lease on them. */
function reschedule(statements: Statements, owner: string, checks: readonly NextCheck[]): void {
  for (const { sessionId, nextCheckAt } of checks) statements.reschedule.run({ sessionId, owner, nextCheckAt });
}

export function sqliteSweepWrites(db: Database, statements: Statements): SweepWrites {
  const failTransaction = db.transaction((sessionId: string, reason: string, now: number, event?: OutcomeRecording) =>
    fail(statements, sessionId, reason, now, event),
  );
  const expireTransaction = db.transaction((now: number, maxAgeMs: number, event?: OutcomeRecording) =>
    expire(statements, now, maxAgeMs, event),
  );
  // Rows as arrays of values (toAttemptFromValues): this statement is the claim's alone.
  statements.dueToClaim.raw(true);
  const claimTransaction = db.transaction((o: ClaimOptions) => claimDue(statements, o));
  const rescheduleTransaction = db.transaction((owner: string, checks: readonly NextCheck[]) =>
    reschedule(statements, owner, checks),
  );
  return {
    async recordFailure(sessionId, reason, now, event) {
      return failTransaction.immediate(sessionId, reason, now, event);
    },
    async claimDueAttempts(claim) {
      return claimTransaction.immediate(claim);
    },
    async scheduleNextChecks(owner, checks) {
      rescheduleTransaction.immediate(owner, checks);
    },
    async releaseClaims(owner) {
      return statements.release.run(owner).changes;
    },
    async expireAttempts(now, maxAgeMs, event) {
      return expireTransaction.immediate(now, maxAgeMs, event);
    },
  };
}
