/**
 * The store interface: the only way routers, the fulfil path and the sweep reach the database.
 * SQL lives behind it (store/sqlite.ts, store/postgres.ts). `Tx` is the transaction handle handed
 * to an action's fulfil: the better-sqlite3 Database, or the pg PoolClient inside BEGIN ... COMMIT.
 */
import type { ActionOrdering, JsonValue, OperationSensitivity, OutcomeSource, Platform } from '../types.ts';

/** `superseded`: verified or not, it was never applied because a newer start of the same user and action was. */
export type AttemptOutcome = 'pending' | 'fulfilled' | 'failed' | 'expired' | 'superseded';

/** An attempt as the start route stores it. */
export interface NewAttempt {
  /** Primary key: the fresh random state of this attempt. */
  state: string;
  sessionId: string;
  /** The integrator's user: ordering, start limits, reads and `fulfil` all group by it. */
  userRef: string;
  /**
   * The `userRef` sent to the service when it is not `userRef` itself (an action that proves the
   * destination: a keyed HMAC of the user and the number). The echoed userRef must equal it.
   */
  serviceUserRef?: string | null;
  action: string;
  params: JsonValue;
  /**
   * The phone destination the session was created for (the service texts the code to it). Only an
   * action that proves the destination proves control of it: see `serviceUserRef`.
   */
  destination: string;
  /**
   * Server-side destination after fulfilment: the action's successPath at start time, or '' when
   * the action computes it at the landing (a successPath function).
   */
  returnTo: string;
  sensitivity: OperationSensitivity;
  platform: Platform;
  /**
   * The client id the session was created with: the service answers `pending` for another
   * client's sessions, so only a kit with this client id can learn their outcome.
   */
  clientId?: string | null;
  createdAt: number;
  /** When the sweep may first read this attempt's status. */
  nextCheckAt: number;
}

/** A stored attempt, as the store reads it back. */
export interface Attempt extends Omit<NewAttempt, 'destination' | 'serviceUserRef' | 'clientId'> {
  /** null when the service was sent `userRef` itself. */
  serviceUserRef: string | null;
  /** null only for attempts stored before the kit recorded client ids (read by any client). */
  clientId: string | null;
  /** null only for attempts stored before the kit recorded destinations (schema version 1). */
  destination: string | null;
  /**
   * The store's start order: assigned at insert from a per-store sequence, so two attempts never
   * tie, whatever the clocks say. "Newest started" means the highest startSeq.
   */
  startSeq: number;
  outcome: AttemptOutcome;
  /** The service's reason, for `failed`. */
  failureReason: string | null;
  fulfilledAt: number | null;
  /** When the outcome stopped being `pending`. */
  finishedAt: number | null;
  /** Status reads made by the sweep so far (drives its backoff). */
  sweepChecks: number;
  /** For `superseded`: the sessionId of the newer attempt that was applied instead. */
  supersededBy: string | null;
}

export type FulfilOnceResult =
  /**
   * This call ran the effect and committed the mark. With ordering 'latest', `superseded` lists the
   * older pending attempts of the same user and action it marked superseded in the same transaction.
   */
  | { kind: 'fulfilled'; attempt: Attempt; superseded: Attempt[]; eventIds: string[] }
  /** Another caller fulfilled it first; the effect did not run. */
  | { kind: 'already_fulfilled'; attempt: Attempt }
  /** A newer attempt of the same user and action was already applied: marked superseded, nothing ran. */
  | { kind: 'superseded'; attempt: Attempt; eventIds: string[] }
  /** The attempt is failed, expired or superseded (or unknown); nothing ran. */
  | { kind: 'not_pending'; attempt: Attempt | undefined };

/**
 * Who recorded an outcome. When given, the store also writes an outcome event (the after-commit
 * hook's outbox) in the same transaction as the outcome itself.
 */
export interface OutcomeRecording {
  source: OutcomeSource;
}

export interface FulfilOnceOptions {
  /** Default 'latest': see ActionDefinition.ordering. Decided inside the fulfil transaction. */
  ordering?: ActionOrdering;
  event?: OutcomeRecording;
}

/** An outcome event waiting for (or past) delivery to the integrator's onOutcome hook. */
export interface StoredOutcomeEvent {
  eventId: string;
  outcome: Exclude<AttemptOutcome, 'pending'>;
  source: OutcomeSource;
  occurredAt: number;
  /** Delivery attempts so far, this claim included (a crash mid-delivery counts). */
  deliveries: number;
  attempt: Attempt;
}

export interface ClaimOutcomeEventsOptions {
  now: number;
  owner: string;
  leaseMs: number;
  limit: number;
  /** Only these events (the ones a request just recorded); default: any due, unleased event. */
  eventIds?: readonly string[];
}

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
export type FulfilEffect<Tx> = (tx: Tx, attempt: Attempt) => unknown;

/** One fulfilment of a group commit: the attempt, the action's part, the time and the options. */
export interface FulfilRequest<Tx> {
  /**
   * The attempt as the caller read it from this store (by state, or claimed): the mark is keyed by
   * its sessionId, and the effect receives it, so the store need not read the row back.
   */
  attempt: Attempt;
  effect: FulfilEffect<Tx>;
  now: number;
  options?: FulfilOnceOptions;
}

/** A request's result in its group, or what its effect threw (then only its own attempt was rolled back). */
export type FulfilSettlement = { ok: true; result: FulfilOnceResult } | { ok: false; error: unknown };

/** When the sweep reads a still-pending attempt again. */
export interface NextCheck {
  sessionId: string;
  nextCheckAt: number;
}

/**
 * The sweep's shared pace (sweep/pacing.ts): one row that every sweep process reads and changes,
 * so a slow-down one process learned from a 429 holds for all. Times are wall-clock ms.
 */
export interface SweepPace {
  /** Status reads a second all sweep processes together may make; null while not paced. */
  ratePerSecond: number | null;
  /** The rate when the service last answered 429 (null while not known). */
  limitPerSecond: number | null;
  /** No sweep read before this (the service's Retry-After). */
  pausedUntil: number;
  /** When the rate was last cut. */
  cutAt: number;
  /** Read permits saved up in the shared bucket, as of `tokensAt`. */
  tokens: number;
  tokensAt: number;
  /**
   * Read permits granted to all processes together, each weighed down by e^(-age in s), as of
   * `tokensAt`: about the reads made in the last second, what a 429 says the service answered.
   */
  readsGranted: number;
}

/** Which attempts a support screen lists (newest first). */
export interface AttemptQuery {
  userRef?: string;
  outcome?: AttemptOutcome;
  /** Only attempts created at or after this time (ms). */
  createdFrom?: number;
  /** Only attempts created before this time (ms). */
  createdBefore?: number;
  limit: number;
}

/** An attempt as kept, with who recorded its outcome (known when an outcome event was written). */
export interface AttemptRecord extends Attempt {
  outcomeSource: OutcomeSource | null;
  /** When retention removed its params and destination (null while they are kept). */
  redactedAt: number | null;
}

/** One retention step: what to redact and delete, and how much at most. */
export interface RetentionBatch {
  now: number;
  /** Settled attempts finished before this lose their params and destination. */
  redactBefore: number;
  /** Settled attempts finished before this are deleted, with their delivered outcome events. */
  deleteBefore: number;
  /** At most this many rows redacted, and this many deleted, per call. */
  limit: number;
}

/** What one retention step redacted and deleted. */
export interface RetentionResult {
  redacted: number;
  deleted: number;
}

/** One start budget: at most `points` starts per fixed window of `durationMs`, counted under `key`. */
export interface StartBudget {
  key: string;
  points: number;
  durationMs: number;
  /**
   * Set for a budget of distinct values (numbers a user tried): a start whose `member` was already
   * counted in the budget's open window spends nothing on it. A counter that ignores it counts
   * every start instead (stricter, never looser).
   */
  member?: string;
}

export interface ConsumeStartBudgetsOptions {
  /** Distinct keys (the kit prefixes each with its budget's name). */
  budgets: readonly StartBudget[];
  now: number;
}

export interface RefundStartBudgetsOptions {
  /** The budgets the start was counted against. */
  budgets: readonly StartBudget[];
  /** The `now` of that consumeStartBudgets call. */
  spentAt: number;
}

/** A spent budget that refused the start: its index in `budgets`, and when its window ends. */
export interface StartBudgetRefusal {
  budget: number;
  retryAfterMs: number;
}

/**
 * A step-up grant: this user proved their factor for `scope` (and `resourceKey`) in the browser
 * session `browserSession`, in the attempt `sessionId`. Its age counts from `startedAt`, the
 * attempt's start: the latest time the kit can prove the code was entered by.
 */
export interface StepUpGrant {
  sessionId: string;
  userRef: string;
  scope: string;
  /** What the grant is bound to (an account id, a payee); '' when the guard binds to nothing. */
  resourceKey: string;
  /** A one-way digest of the browser session's id: a grant never outlives the session it was made in. */
  browserSession: string;
  startedAt: number;
  /** When the verification was fulfilled into this grant. */
  grantedAt: number;
}

/**
 * A guarded request kept server-side while its user verifies: where to return (GET), or the form
 * to run once confirmed (POST). Bound to the user, the browser session and the scope.
 */
export interface NewStepUpIntent {
  intentId: string;
  userRef: string;
  scope: string;
  browserSession: string;
  resourceKey: string;
  method: string;
  /** The guarded path and query, as the server received them (never from a parameter). */
  path: string;
  /** The form's fields (POST), kept to run the handler with once confirmed; {} for a GET. */
  fields: JsonValue;
  createdAt: number;
  expiresAt: number;
}

export interface StepUpIntent extends NewStepUpIntent {
  consumedAt: number | null;
}

/** A user's grants (of one scope when given), as a support screen lists them. */
export interface UserGrantQuery {
  userRef: string;
  scope?: string;
  limit: number;
}

/**
 * The grants the guard judges a request by: of one user, scope and browser session (and resource
 * when given), started at or after `startedSince` and granted at or after `grantedSince` (ms; no
 * bound when left out).
 */
export interface SessionGrantQuery extends UserGrantQuery {
  scope: string;
  browserSession: string;
  resourceKey?: string;
  startedSince?: number;
  grantedSince?: number;
}

export type GrantQuery = UserGrantQuery | SessionGrantQuery;

/** What StepUpStore.replaceIntent did. */
export type IntentReplacement = 'replaced' | 'used' | 'refused';

/** The step-up part of a store: grants and intents. */
export interface StepUpStore {
  /**
   * Writes a grant in a transaction of its own (the landing's, after its attempt's fulfilment
   * committed). Replaces the older grants of the same user, scope, resource and browser session; a
   * grant of the same sessionId already there is kept as it is (a reload writes nothing more).
   */
  insertGrant(grant: StepUpGrant): Promise<void>;
  /**
   * A user's grants, newest first (of one scope when given; of one browser session, resource and
   * age with a `SessionGrantQuery`, read through an index so a grant is found however many the user
   * holds elsewhere). A grant started at or before a revocation of its user and scope, or of all
   * the user's scopes, is never listed.
   */
  listGrants(query: GrantQuery): Promise<StepUpGrant[]>;
  /**
   * Deletes a user's grants (of one scope when given) and records the revocation at `now` in the
   * same transaction, so a verification in flight that writes its grant later grants nothing. The
   * user's kept requests (intents, of that scope) are deleted in it too, with their fields: none can
   * be confirmed after a sign-out. Returns how many grants were deleted.
   */
  revokeGrants(query: { userRef: string; scope?: string; now: number }): Promise<number>;
  /**
   * Stores an intent unless its user already has `maxLive` live ones (unconsumed, unexpired):
   * true when it was stored. The user's expired intents are deleted in the same write.
   */
  insertIntent(intent: NewStepUpIntent, maxLive: number): Promise<boolean>;
  /**
   * Keeps `replacement` in place of the user's intent `replacedId`, in one transaction: uses that
   * one up (as consumeIntent, at `replacement.createdAt`) and stores the replacement unless the user
   * then has `maxLive` live ones. 'replaced' when both were done; 'used' when the replaced intent was
   * no longer live (consumed or expired) and 'refused' at the limit, nothing changed for either.
   * Optional (a store written before it): without it the replacement is kept with room for one
   * more and the replaced one used up after, so concurrent replacements by a user at the limit
   * may be refused; both of the kit's stores have it.
   */
  replaceIntent?(replacement: NewStepUpIntent, replacedId: string, maxLive: number): Promise<IntentReplacement>;
  /**
   * Keeps a page's intent (method GET) in one transaction: the user's live page intent of the same
   * scope, browser session, resource and path, its expiry moved to `intent.expiresAt` (its id), or
   * else `intent`, stored unless the user has `maxLive` live ones (its id; false when refused).
   * Optional (a store written before it): without it the kit calls renewPageIntent, then
   * insertIntent, so a page asked for several times at once may keep one intent per request; both
   * of the kit's stores have it.
   */
  keepPageIntent?(intent: NewStepUpIntent, maxLive: number): Promise<string | false>;
  /**
   * The unconsumed, unexpired page intent (method GET) of this user, scope, resource, browser
   * session and path, its expiry moved to `expiresAt`: its id, or undefined. A page requested again
   * and again keeps one intent instead of a row per request.
   */
  renewPageIntent(query: {
    userRef: string;
    scope: string;
    browserSession: string;
    resourceKey: string;
    path: string;
    now: number;
    expiresAt: number;
  }): Promise<string | undefined>;
  findIntent(intentId: string): Promise<StepUpIntent | undefined>;
  /**
   * Marks an intent consumed and clears its stored fields, atomically: only one caller, on any
   * process, gets it back (with the fields it was kept with); an expired or consumed intent gives
   * undefined.
   */
  consumeIntent(intentId: string, now: number): Promise<StepUpIntent | undefined>;
  /** Deletes up to `limit` expired intents, consumed or not (the sweep's retention); returns how many. */
  purgeExpiredIntents(query: { now: number; limit: number }): Promise<number>;
  /**
   * Deletes up to `limit` grants started before `startedBefore` (the sweep's retention: a day ago,
   * past any maxAge, so nothing reads them again); returns how many. Optional (a store written
   * before grants were purged): without it the sweep deletes no grant, warns once and reports
   * `grantsPurgeSkipped`; both of the kit's stores have it.
   */
  purgeStaleGrants?(query: { startedBefore: number; limit: number }): Promise<number>;
}

/** What the SMS pumping counters count texts by: one key in each, per start. */
export type PumpingDimension = 'country' | 'block' | 'address' | 'user' | 'address_country';

/** One counter key: a country code, a number block, a client address (IPv6 per prefix), a userRef. */
export interface PumpingKey {
  dimension: PumpingDimension;
  key: string;
}

/** Texts sent and verified under one key, in hourly buckets, as of the hour asked about. */
export interface PumpingCount {
  sentThisHour: number;
  verifiedThisHour: number;
  sentLastHour: number;
  verifiedLastHour: number;
  /** The 24 hourly buckets up to and including this hour. */
  sentLastDay: number;
  verifiedLastDay: number;
  /** The most verified in any of the last 14 rolling days (24 buckets each, this one included). */
  maxVerifiedDay: number;
  /** Starts refused, or let through only by the challenge, because this key's rules tripped, this hour and the one before. */
  refusedThisHour: number;
  refusedLastHour: number;
}

/** An operator's rule on one key: always allow it (a release) or refuse every start to it, until `until`. */
export interface PumpingRule extends PumpingKey {
  rule: 'allow' | 'block';
  until: number;
  setAt: number;
}

/** What the pumping check reads before a text, in one call. */
export interface PumpingReading {
  /** In the order of the keys asked about. */
  counts: PumpingCount[];
  /** Distinct countries the address texted in the last 24 hours without one verification from it. */
  unverifiedCountries: number;
  /** The live operator rules on any of the keys asked about. */
  rules: PumpingRule[];
}

/** One pumping decision, recorded for operators. */
export interface PumpingDecisionRecord {
  decidedAt: number;
  /** warned: a rule tripped and the start went on (record mode); refused; challenged: passed the app's challenge. */
  decision: 'warned' | 'refused' | 'challenged';
  /** The rules that tripped, e.g. country_hourly, block_daily, address_countries, blocked. */
  reasons: string[];
  country: string;
  block: string;
  address: string;
  userRef: string;
}

/** Texts sent and verified per key and day, for operators' reads. */
export interface PumpingDayCount {
  key: string;
  /** Days back from the hour asked about: 0 is the last 24 hours. */
  daysAgo: number;
  sent: number;
  verified: number;
}

/**
 * The SMS pumping counters, shared by every instance that uses the store: texts sent and verified
 * per key and hour, each send's keys (so a verification moves the counts it was counted in), the
 * decisions and the operators' rules. Bounded: `purgePumping` deletes what is older than the
 * windows read.
 */
export interface PumpingStore {
  /** The counts of every key at `hour` (ms since the epoch / 3,600,000), the address's unverified countries, the live rules. */
  readPumping(query: {
    keys: readonly PumpingKey[];
    address: string;
    hour: number;
    now: number;
  }): Promise<PumpingReading>;
  /**
   * The check before a text: reads as readPumping does and, in the same atomic unit, counts one
   * text under every key in `hour`. The reading is as it was just before this text: concurrent
   * callers, on any instance, are serialised, so two never read the same `sentThisHour`.
   */
  reserveSend(query: {
    keys: readonly PumpingKey[];
    address: string;
    hour: number;
    now: number;
  }): Promise<PumpingReading>;
  /** Gives back a text reserveSend counted and that was never sent (never below 0). */
  releaseSend(send: { keys: readonly PumpingKey[]; hour: number }): Promise<void>;
  /** Records the send of a reserved text (its session), so markVerified counts under its keys and hour; counts nothing. */
  attachSend(send: { sessionId: string; keys: readonly PumpingKey[]; hour: number }): Promise<void>;
  /** Counts one text sent (its session) under every key, in the hour given; a session counted already counts nothing more. */
  recordSend(send: { sessionId: string; keys: readonly PumpingKey[]; hour: number }): Promise<void>;
  /** The session's text was verified: counted under the keys and hour of its send, once. True when this call counted it. */
  markVerified(sessionId: string): Promise<boolean>;
  /**
   * Counts verified, as markVerified would, the texts of attempts fulfilled at or after `since`
   * that are still counted unverified (their count failed), at most `limit`; returns how many. The
   * sweep's repair of a count a store error lost. Left out: such a text stays unverified.
   */
  countFulfilledSends?(query: { since: number; limit: number }): Promise<number>;
  /** Records a decision; a refusal or a challenge also counts under `refused.keys` (the keys whose rules tripped) in `refused.hour`. */
  recordDecision(
    decision: PumpingDecisionRecord,
    refused?: { keys: readonly PumpingKey[]; hour: number },
  ): Promise<void>;
  /** Counts a refusal under `keys` in `hour`, as recordDecision does, with no decision row (one past the decisions' bound). */
  countRefused(refused: { keys: readonly PumpingKey[]; hour: number }): Promise<void>;
  /** Decisions at or after `since`, newest first. */
  listDecisions(query: { since: number; limit: number }): Promise<PumpingDecisionRecord[]>;
  /** Sets (or replaces) an operator's rule on one key. */
  setRule(rule: PumpingRule): Promise<void>;
  /** Removes an operator's rule; true when there was one. */
  clearRule(key: PumpingKey): Promise<boolean>;
  /** The live rules (until after `now`). */
  listRules(now: number): Promise<PumpingRule[]>;
  /** Sent and verified per key of `dimension` and day, over `days` days back from `hour`. */
  countsByDay(query: { dimension: PumpingDimension; hour: number; days: number }): Promise<PumpingDayCount[]>;
  /** Deletes counts and sends from hours before `beforeHour`, decisions before `decisionsBefore`, ended rules; up to `limit` rows of each. */
  purgePumping(query: { beforeHour: number; decisionsBefore: number; now: number; limit: number }): Promise<number>;
}

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
