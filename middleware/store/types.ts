/**
 * The store interface: the only way routers, the fulfil path and the sweep reach the database.
 * SQL lives behind it (store/sqlite.ts, store/postgres.ts). `Tx` is the transaction handle handed
 * to an action's fulfil: the better-sqlite3 Database, or the pg PoolClient inside BEGIN ... COMMIT.
 */
import type { JsonValue, OperationSensitivity, Platform } from '../types.ts';

export type AttemptOutcome = 'pending' | 'fulfilled' | 'failed' | 'expired';

export interface NewAttempt {
  /** Primary key: the fresh random state of this attempt. */
  state: string;
  sessionId: string;
  userRef: string;
  action: string;
  params: JsonValue;
  /** Server-side destination after fulfilment (the action's successPath at start time). */
  returnTo: string;
  sensitivity: OperationSensitivity;
  platform: Platform;
  createdAt: number;
  /** When the sweep may first read this attempt's status. */
  nextCheckAt: number;
}

export interface Attempt extends NewAttempt {
  outcome: AttemptOutcome;
  /** The service's reason, for `failed`. */
  failureReason: string | null;
  fulfilledAt: number | null;
  /** When the outcome stopped being `pending`. */
  finishedAt: number | null;
  /** Status reads made by the sweep so far (drives its backoff). */
  sweepChecks: number;
}

export type FulfilOnceResult =
  /** This call ran the effect and committed the mark. */
  | { kind: 'fulfilled'; attempt: Attempt }
  /** Another caller fulfilled it first; the effect did not run. */
  | { kind: 'already_fulfilled'; attempt: Attempt }
  /** The attempt is failed or expired (or unknown); nothing ran. */
  | { kind: 'not_pending'; attempt: Attempt | undefined };

export interface ClaimOptions {
  now: number;
  /** Only attempts created after `now - maxAgeMs` are claimed. */
  maxAgeMs: number;
  limit: number;
  /** The claim expires after this long, so a crashed worker's rows come back. */
  leaseMs: number;
  /** Identifies the claiming worker (process + random suffix). */
  owner: string;
  /**
   * Only attempts started on this platform: when a web kit and a mobile kit (two clients) share a
   * store, each sweep claims only the sessions its own client can read. Default: all.
   */
  platform?: Platform;
}

/** The action's part of a fulfilment, run inside the store's transaction with its handle. */
export type FulfilEffect<Tx> = (tx: Tx, attempt: Attempt) => void | Promise<void>;

export interface VerifyStore<Tx = unknown> {
  insertAttempt(attempt: NewAttempt): Promise<void>;
  findAttemptByState(state: string): Promise<Attempt | undefined>;
  /**
   * Runs `effect` and marks the attempt fulfilled in ONE transaction keyed by sessionId. Across
   * processes and concurrent callers the effect commits at most once; if it throws, nothing is
   * marked and the error propagates. The effect may return a promise where the store's transaction
   * can span one (PostgreSQL); the SQLite store refuses one, its transaction being synchronous.
   */
  fulfilOnce(sessionId: string, effect: FulfilEffect<Tx>, now: number): Promise<FulfilOnceResult>;
  /** Marks a pending attempt failed with the service's reason; never touches a fulfilled one. */
  recordFailure(sessionId: string, reason: string, now: number): Promise<void>;
  /** Claims up to `limit` pending attempts that are due and not leased by a live worker. */
  claimDueAttempts(options: ClaimOptions): Promise<Attempt[]>;
  /** Releases this owner's claim on an attempt that is still pending and sets its next check. */
  scheduleNextCheck(sessionId: string, owner: string, nextCheckAt: number): Promise<void>;
  /** Releases every claim held by `owner` without changing schedules (graceful stop). */
  releaseClaims(owner: string): Promise<number>;
  /** Marks pending attempts created before `now - maxAgeMs` expired; returns how many. */
  expireAttempts(now: number, maxAgeMs: number): Promise<number>;
  close(): Promise<void>;
}
