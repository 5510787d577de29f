/**
 * A read API for support screens: find attempts by user, outcome and age, or one by sessionId.
 * What it returns is safe to show an operator: no params, no state, and the destination masked.
 * Also the success page's one-time flash: the attempt its user just landed on, read once.
 */
import type { Request } from 'express';
import { KitError, KitErrorCode } from './errors.ts';
import { maskDestination } from './numbers/mask-number.ts';
import type { AttemptOutcome, AttemptRecord, VerifyStore } from './store/types.ts';
import type { OperationSensitivity, OutcomeSource, Platform } from './types.ts';

/** An attempt as support screens see it: no params, no state, the destination masked. */
export interface AttemptSummary {
  sessionId: string;
  userRef: string;
  action: string;
  outcome: AttemptOutcome;
  /** The service's reason, for `failed`. */
  reason: string | null;
  /** For `superseded`: the newer attempt applied instead. */
  supersededBy: string | null;
  /** Who recorded the outcome (landing, mobile, sweep), when an outcome event was written (onOutcome). */
  source: OutcomeSource | null;
  platform: Platform;
  /**
   * The client id the session was created with (only that client can read it); null when it was
   * stored before the kit recorded client ids.
   */
  clientId: string | null;
  sensitivity: OperationSensitivity;
  createdAt: number;
  finishedAt: number | null;
  fulfilledAt: number | null;
  /** The texted number with all but its last two digits hidden; null once retention removed it. */
  destination: string | null;
  /** True once retention removed the attempt's params and destination. */
  redacted: boolean;
}

/** A search of `kit.attempts.find`. */
export interface AttemptSearch {
  userRef?: string;
  outcome?: AttemptOutcome;
  /** Only attempts started within the last this many ms. */
  newerThanMs?: number;
  /** Only attempts started longer ago than this many ms. */
  olderThanMs?: number;
  /** Default 50, at most 500. */
  limit?: number;
}

/**
 * The attempt its own user just landed on, fulfilled, as the success page reads it: identifiers
 * only (for its details: `await kit.attempts.get(landed.sessionId)`).
 */
export interface LandedAttemptFlash {
  sessionId: string;
  action: string;
  /**
   * 'first' when that landing ran the action, or the pending page's own check ran it just before
   * (the user's first arrival since); 'replay' for a reload or when something else ran it first.
   */
  fulfilment: 'first' | 'replay';
}

/** Reads for support screens (`kit.attempts`). */
export interface AttemptReader {
  /** Attempts matching the search, newest first. */
  find(search?: AttemptSearch): Promise<AttemptSummary[]>;
  /** One attempt by its sessionId, or undefined. */
  get(sessionId: string): Promise<AttemptSummary | undefined>;
  /**
   * On the page a landing sent its user to (the successPath): the attempt just fulfilled, once.
   * The landing leaves it in the user's session (express-session) and this takes it out, so a
   * second read, another user or a page opened directly gets undefined. Synchronous (the session
   * is already loaded): its result is the value itself, never a promise that is always truthy.
   */
  takeLanded(req: Request): LandedAttemptFlash | undefined;
}

/** The session key of the landing's one-time flash. */
export const LANDED_SESSION_KEY = 'verifyKitLanded';

function sessionOf(req: Request): Record<string, unknown> | undefined {
  const session = (req as Request & { session?: unknown }).session;
  return typeof session === 'object' && session !== null ? (session as unknown as Record<string, unknown>) : undefined;
}

/** Leaves the flash for the success page (nothing without express-session). */
export function leaveLandedFlash(req: Request, flash: LandedAttemptFlash): void {
  const session = sessionOf(req);
  if (session !== undefined) session[LANDED_SESSION_KEY] = { ...flash };
}

/** The session key naming the attempt a pending page's own check fulfilled, until its user arrives. */
const UNSEEN_FIRST_SESSION_KEY = 'verifyKitUnseenFirst';

/**
 * Remembers, in the user's session, that the pending page's own check (a fetch the user never
 * sees) ran this attempt's action: the landing the page then opens is the user's first sight of it.
 */
export function rememberUnseenFirst(req: Request, sessionId: string): void {
  const session = sessionOf(req);
  if (session !== undefined) session[UNSEEN_FIRST_SESSION_KEY] = sessionId;
}

/** Whether this session's user has not yet seen this attempt's first fulfilment (true once). */
export function takeUnseenFirst(req: Request, sessionId: string): boolean {
  const session = sessionOf(req);
  if (session?.[UNSEEN_FIRST_SESSION_KEY] !== sessionId) return false;
  session[UNSEEN_FIRST_SESSION_KEY] = undefined;
  return true;
}

/** Takes the flash out of the session: it is read once. */
function takeFlash(req: Request): LandedAttemptFlash | undefined {
  const session = sessionOf(req);
  const flash = session?.[LANDED_SESSION_KEY];
  if (session === undefined || flash === undefined) return undefined;
  session[LANDED_SESSION_KEY] = undefined;
  if (typeof flash !== 'object' || flash === null) return undefined;
  const { sessionId, action, fulfilment } = flash as Record<string, unknown>;
  if (typeof sessionId !== 'string' || typeof action !== 'string') return undefined;
  if (fulfilment !== 'first' && fulfilment !== 'replay') return undefined;
  return { sessionId, action, fulfilment };
}

export { maskDestination };

const OUTCOMES: readonly AttemptOutcome[] = ['pending', 'fulfilled', 'failed', 'expired', 'superseded'];

function summarise(record: AttemptRecord): AttemptSummary {
  return {
    sessionId: record.sessionId,
    userRef: record.userRef,
    action: record.action,
    outcome: record.outcome,
    reason: record.failureReason,
    supersededBy: record.supersededBy,
    source: record.outcomeSource,
    platform: record.platform,
    clientId: record.clientId,
    sensitivity: record.sensitivity,
    createdAt: record.createdAt,
    finishedAt: record.finishedAt,
    fulfilledAt: record.fulfilledAt,
    destination: record.destination === null ? null : maskDestination(record.destination),
    redacted: record.redactedAt !== null,
  };
}

/** Names the call that was given it, so the message says which call to fix. */
function invalid(call: 'find' | 'get', message: string): KitError {
  return new KitError(KitErrorCode.InvalidOptions, `kit.attempts.${call}: ${message}`);
}

function checkSearch(search: AttemptSearch): void {
  if (typeof search !== 'object' || search === null) {
    throw invalid('find', 'pass a search object, e.g. { userRef, limit: 20 }.');
  }
  if (search.userRef !== undefined && (typeof search.userRef !== 'string' || search.userRef === '')) {
    throw invalid('find', '`userRef` must be a non-empty string.');
  }
  if (search.outcome !== undefined && !OUTCOMES.includes(search.outcome)) {
    throw invalid('find', `\`outcome\` must be one of ${OUTCOMES.join(', ')}.`);
  }
  for (const name of ['newerThanMs', 'olderThanMs'] as const) {
    const value = search[name];
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
      throw invalid('find', `\`${name}\` must be whole ms >= 0.`);
    }
  }
  if (search.limit !== undefined && (!Number.isInteger(search.limit) || search.limit < 1 || search.limit > 500)) {
    throw invalid('find', '`limit` must be a whole number from 1 to 500.');
  }
}

export function createAttemptReader(
  store: Pick<VerifyStore, 'listAttempts' | 'findAttemptBySessionId'>,
  now: () => number,
): AttemptReader {
  return {
    async find(search = {}) {
      checkSearch(search);
      const at = now();
      const records = await store.listAttempts({
        ...(search.userRef === undefined ? {} : { userRef: search.userRef }),
        ...(search.outcome === undefined ? {} : { outcome: search.outcome }),
        ...(search.newerThanMs === undefined ? {} : { createdFrom: at - search.newerThanMs }),
        ...(search.olderThanMs === undefined ? {} : { createdBefore: at - search.olderThanMs }),
        limit: search.limit ?? 50,
      });
      return records.map(summarise);
    },
    async get(sessionId) {
      if (typeof sessionId !== 'string' || sessionId === '')
        throw invalid('get', '`sessionId` must be a non-empty string.');
      const record = await store.findAttemptBySessionId(sessionId);
      return record === undefined ? undefined : summarise(record);
    },
    takeLanded: takeFlash,
  };
}
