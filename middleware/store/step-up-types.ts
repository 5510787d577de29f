/** The store contract's step-up part: grants, kept requests (intents) and the StepUpStore (store/types.ts). */
import type { JsonValue } from '../types.ts';

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
