/**
 * The store interface: the only way routers, the fulfil path and the sweep reach the database.
 * SQL lives behind it (store/sqlite.ts, store/postgres.ts). `Tx` is the transaction handle handed
 * to an action's fulfil: the better-sqlite3 Database, or the pg PoolClient inside BEGIN ... COMMIT.
 * Its parts sit beside it by concern, re-exported here: attempts and their outcome events
 * (attempt-types.ts), the sweep's (sweep-types.ts), support reads and retention (record-types.ts),
 * start budgets (budget-types.ts), step-up (step-up-types.ts), SMS pumping (pumping-types.ts).
 */
import type {
  Attempt,
  ClaimOutcomeEventsOptions,
  FulfilRequest,
  FulfilSettlement,
  NewAttempt,
  OutcomeRecording,
  StoredOutcomeEvent,
} from './attempt-types.ts';
import type { ConsumeStartBudgetsOptions, RefundStartBudgetsOptions, StartBudgetRefusal } from './budget-types.ts';
import type { PumpingStore } from './pumping-types.ts';
import type { AttemptQuery, AttemptRecord, RetentionBatch, RetentionResult } from './record-types.ts';
import type { StepUpStore } from './step-up-types.ts';
import type { ClaimOptions, NextCheck, SweepPace } from './sweep-types.ts';

export type {
  Attempt,
  AttemptOutcome,
  ClaimOutcomeEventsOptions,
  FulfilEffect,
  FulfilOnceOptions,
  FulfilOnceResult,
  FulfilRequest,
  FulfilSettlement,
  NewAttempt,
  OutcomeRecording,
  StoredOutcomeEvent,
} from './attempt-types.ts';
export type {
  ConsumeStartBudgetsOptions,
  RefundStartBudgetsOptions,
  StartBudget,
  StartBudgetRefusal,
} from './budget-types.ts';
export type {
  CountedByCheck,
  Headroom,
  PumpingCount,
  PumpingDayCount,
  PumpingDecisionRecord,
  PumpingDimension,
  PumpingKey,
  PumpingReading,
  PumpingRule,
  PumpingStore,
  SureLimits,
} from './pumping-types.ts';
export type { AttemptQuery, AttemptRecord, RetentionBatch, RetentionResult } from './record-types.ts';
export type {
  GrantQuery,
  IntentReplacement,
  NewStepUpIntent,
  SessionGrantQuery,
  StepUpGrant,
  StepUpIntent,
  StepUpStore,
  UserGrantQuery,
} from './step-up-types.ts';
export type { ClaimOptions, NextCheck, SweepPace } from './sweep-types.ts';

/** What a store implements; `Tx` is the transaction handle actions receive. */
export interface VerifyStore<Tx = unknown> {
  /**
   * True when the store's transaction cannot span a promise (SQLite): createVerificationKit then
   * refuses an action whose fulfil is an `async function`. Left out: async effects are allowed.
   */
  readonly synchronousTransactions?: boolean;
  insertAttempt(attempt: NewAttempt): Promise<void>;
  findAttemptByState(state: string): Promise<Attempt | undefined>;
  /**
   * Fulfils each request, in the order given, in ONE store transaction. For each request the store
   * runs `effect` and marks `attempt` (as read from this store) fulfilled together, keyed by its
   * sessionId: across processes and concurrent callers the effect commits at most once; if it
   * throws, nothing of that attempt is marked and its settlement carries the error (SQLite: a
   * savepoint per request; PostgreSQL: a failed group is settled again one request per
   * transaction), so an effect that throws rolls back only its own attempt. The effect may return a
   * promise where the store's transaction can span one (PostgreSQL); the SQLite store refuses one,
   * its transaction being synchronous. A fulfilment alone (the landing's) is a batch of one.
   * Rejects (nothing committed) only when the transaction itself fails; a batch of one may instead
   * reject with its effect's error.
   *
   * With ordering 'latest' (the default) the same transaction also decides the order, serialised
   * against every other fulfilment of the same userRef and action: when an attempt with a higher
   * startSeq is already fulfilled, this one is marked superseded and the effect does not run;
   * otherwise, in the same transaction as the effect, every older still-pending attempt of that
   * user and action is marked superseded (it must never apply after this one). The PostgreSQL
   * store takes a transaction-scoped advisory lock on the user and action for the same guarantee,
   * every request's lock first, in one sorted order, so two processes committing overlapping groups
   * queue instead of deadlocking.
   */
  fulfilBatch(requests: readonly FulfilRequest<Tx>[]): Promise<FulfilSettlement[]>;
  /** Marks a pending attempt failed with the service's reason; never touches a settled one. */
  recordFailure(
    sessionId: string,
    reason: string,
    now: number,
    event?: OutcomeRecording,
  ): Promise<{ eventIds: string[] }>;
  /** Claims up to `limit` pending attempts that are due and not leased by a live worker. */
  claimDueAttempts(options: ClaimOptions): Promise<Attempt[]>;
  /**
   * For each check, ends this owner's claim on the attempt (still pending), sets its next check and
   * counts one more sweep check, in one write (the sweep's reschedules, batched). An attempt another
   * owner holds, or one already settled, is left as it is.
   */
  scheduleNextChecks(owner: string, checks: readonly NextCheck[]): Promise<void>;
  /**
   * Reads the sweep's shared pace and writes what `change` returns (nothing when undefined), in one
   * transaction that serialises every process's changes; returns the row as it is afterwards.
   * `change` runs synchronously inside the transaction. Optional: without it each sweep process
   * paces itself alone.
   */
  updateSweepPace?(change: (current: SweepPace) => SweepPace | undefined): Promise<SweepPace>;
  /** Releases every claim held by `owner` without changing schedules (graceful stop). */
  releaseClaims(owner: string): Promise<number>;
  /** Marks pending attempts created before `now - maxAgeMs` expired; returns how many. */
  expireAttempts(now: number, maxAgeMs: number, event?: OutcomeRecording): Promise<number>;
  /**
   * Leases undelivered outcome events that are due (or the given ones) to `owner` until
   * `now + leaseMs`; an event leased by a live owner or already delivered is never returned.
   */
  claimOutcomeEvents(options: ClaimOutcomeEventsOptions): Promise<StoredOutcomeEvent[]>;
  /** Marks an event this owner holds delivered: it is never delivered again. */
  markOutcomeEventDelivered(eventId: string, owner: string, now: number): Promise<void>;
  /** Releases this owner's lease on an undelivered event and sets when to try again. */
  retryOutcomeEvent(eventId: string, owner: string, nextAttemptAt: number): Promise<void>;
  /** One attempt by its sessionId, for support screens. */
  findAttemptBySessionId(sessionId: string): Promise<AttemptRecord | undefined>;
  /** Attempts matching `query`, newest first. */
  listAttempts(query: AttemptQuery): Promise<AttemptRecord[]>;
  /**
   * Data kept only as long as needed, in small batches: settled attempts lose their params and
   * destination after one period and are deleted after a longer one. An attempt whose outcome
   * event is not yet delivered is kept whole until it is.
   */
  applyRetention(batch: RetentionBatch): Promise<RetentionResult>;
  /**
   * Counts one start against every budget in ONE transaction: only when all of them have room is
   * each incremented; otherwise nothing is spent and the refusals (empty when allowed) say which
   * budgets were full. Fixed windows: a budget's window starts with its first start and ends
   * `durationMs` later. Safe across processes. Expired counters are deleted now and then.
   * Optional: a store without it needs start limits of the integrator's own (`limits`).
   */
  consumeStartBudgets?(options: ConsumeStartBudgetsOptions): Promise<StartBudgetRefusal[]>;
  /**
   * Gives back one start counted by `consumeStartBudgets` at `spentAt` (the service refused to
   * create the session, so nothing was sent): each counter is decremented only while the window
   * that start was counted in is still open. Optional.
   */
  refundStartBudgets?(options: RefundStartBudgetsOptions): Promise<void>;
  /** Step-up grants and intents (requireRecentVerification). Optional: both of the kit's stores have it. */
  readonly stepUp?: StepUpStore;
  /** The SMS pumping counters. Optional: both of the kit's stores have them; without them the kit counts nothing. */
  readonly pumping?: PumpingStore;
  close(): Promise<void>;
}

/** What counts start budgets: both of the kit's stores, or an integrator's own shared counter. */
export type StartBudgetCounter = Required<Pick<VerifyStore, 'consumeStartBudgets'>> &
  Pick<VerifyStore, 'refundStartBudgets'>;
