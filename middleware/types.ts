/** Types shared by the kit's modules. Each module's own options live beside it. */

import type { Request } from 'express';

/** How sensitive an action is, as the service's session create takes it. */
export type OperationSensitivity = 'normal' | 'sensitive';
/** 'web' (a browser returns to the landing) or 'mobile' (a deep link returns to the app). */
export type Platform = 'web' | 'mobile';
/** Where an outcome was decided: the web landing, the mobile completion or the sweep. */
export type OutcomeSource = 'landing' | 'mobile' | 'sweep';
/**
 * 'latest': of one user's attempts of this action, the newest started one that is verified wins;
 * an older one is never applied after a newer one was (it becomes `superseded`).
 * 'independent': every verified attempt applies, in whatever order they arrive.
 */
export type ActionOrdering = 'latest' | 'independent';

/**
 * What a verification of an action proves. 'user': whoever holds the user's factor answered (the
 * SMS code, or a passkey the hosted page enrolled for this user), not that they hold this number.
 * 'destination': they hold this number: the service is sent a userRef bound to the user AND the
 * number, so only the code texted to it, or a passkey enrolled in a session for this same number,
 * can verify it.
 */
export type VerificationProof = 'user' | 'destination';

/** Where an action's code is texted: the user's own number, or the one typed into the start request. */
export type DestinationSource = 'user' | 'entered';

/** JSON-serialisable values: action parameters are stored as JSON beside the attempt. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

// ---- the service, as the kit sees it (spec: "Session create" and "Session status") ----

/** What the kit sends to create a session (spec: "Session create"). */
export interface CreateSessionInput {
  returnUrl: string;
  destination: string;
  operationSensitivity: OperationSensitivity;
  userRef: string;
  state: string;
  platform: Platform;
}

/** The service's answer to a session create. */
export interface CreatedSession {
  sessionId: string;
  /** Used exactly as returned: never built or extended. */
  verifyUrl: string;
  /** Single use, 120 s; travels only in a request body. */
  handoff: string;
  expiresInSeconds: number;
  /** True when the service replayed an earlier success for the same Idempotency-Key. */
  replayed: boolean;
}

/** The failure reasons the spec names; any other reason is a generic failure. */
export const KNOWN_FAILURE_REASONS = ['otp_locked', 'device_changed', 'session_binding_failed'] as const;
/** A failure reason the kit has its own text for. */
export type KnownFailureReason = (typeof KNOWN_FAILURE_REASONS)[number];

/**
 * A session's status as the service reports it (spec: "Session status"). A `verified` one always
 * carries the echoed state and userRef: the client refuses one without them as a protocol error.
 */
export type SessionStatus =
  | { status: 'pending'; state?: string; userRef?: string }
  | { status: 'verified'; state: string; userRef: string }
  /** `reason` is one of KNOWN_FAILURE_REASONS or any other string (a generic failure). */
  | { status: 'failed'; reason: string; state?: string; userRef?: string };

/** The backend client for the service; createVerifyClient builds the kit's own. */
export interface VerifyClient {
  /**
   * POST /session with an Idempotency-Key unique to the logical attempt. Retries network errors,
   * 5xx and 409 idempotency_request_in_flight with the same key; throws KitError otherwise. A
   * `service_busy`, or a `service_rejected` with a 4xx `serviceStatus` (but 408) and no `cause`,
   * tells the kit no session was created: the start's budgets and counted text are given back.
   */
  createSession(input: CreateSessionInput, idempotencyKey: string): Promise<CreatedSession>;
  /** GET /session/{id}. Unknown fields and reasons are tolerated; assertionExchanged is ignored. */
  getSession(sessionId: string): Promise<SessionStatus>;
  close(): Promise<void>;
}

// ---- the integrator's guarded actions ----

/** What an action's fulfil receives about the verified attempt. */
export interface VerifiedAttempt {
  sessionId: string;
  state: string;
  userRef: string;
  action: string;
  params: JsonValue;
  /**
   * The phone destination the session was created for. Possession of it is proven only by an
   * action with `proves: 'destination'`; with 'user' a passkey may have answered instead of the
   * code texted to it. null only for attempts stored before the kit recorded it (schema version 1).
   */
  destination: string | null;
  /** When the attempt was started (ms): the latest time the kit can prove the code was entered by. */
  startedAt: number;
}

/** What a `successPath` function is told: the fulfilled attempt its own user landed on. */
export interface LandedAttempt {
  sessionId: string;
  userRef: string;
  action: string;
  params: JsonValue;
  outcome: 'fulfilled';
  /**
   * 'first' when this landing ran the action, or the pending page's own check ran it and this is
   * the user's first arrival since (in the same browser session); 'replay' when it was already
   * done (a reload, a second tab, or the sweep got there first).
   */
  fulfilment: 'first' | 'replay';
}

/** What `prepare` is told besides the request. */
export interface PrepareContext {
  /**
   * The signed-in user the attempt is for, and the destination the code will be sent to (for an
   * action with `destination: 'entered'`, the typed number as E.164).
   */
  user: { userRef: string; destination: string };
  /**
   * On a restart ("start a new verification" after a failure or expiry): the finished attempt's
   * stored parameters. Validate them again for the user as they are now and return the
   * parameters to store (or throw to refuse the restart; nothing is sent). Undefined on a fresh start.
   */
  restartParams?: JsonValue;
}

/** The step-up an action's start requires: see ActionDefinition.requireRecentVerification. */
export interface ActionStepUp {
  /** A scope declared in the kit's `scopes` option. */
  scope: string;
  /** Seconds, as the guard's `maxAge`: how long ago the grant's verification may have started. */
  maxAge: number;
}

/** A guarded action the integrator registers: what to do, exactly once, when a verification succeeds. */
export interface ActionDefinition<Tx = unknown> {
  /** Registered name, picked by the server; `^[a-z][a-z0-9_-]{0,63}$`. */
  name: string;
  operationSensitivity: OperationSensitivity;
  /**
   * Where to send the attempt's own user after fulfilment: a same-origin path starting with a
   * single "/", or a function of the landed attempt returning one (to show the outcome, e.g.
   * `({ sessionId }) => \`/done?session=\${encodeURIComponent(sessionId)}\``, then
   * `kit.attempts.get(sessionId)` on that page). Decided on the server: nothing the browser sends
   * can change it. A returned value that is not such a path (or a throw) is logged and the user
   * sees the kit's neutral "complete" page instead of a redirect.
   */
  successPath: string | ((landed: LandedAttempt) => string);
  /**
   * Default 'latest'. See ActionOrdering. With an entered destination, 'latest' also decides
   * between two numbers a user tried: only the newest started one that verifies is applied.
   */
  ordering?: ActionOrdering;
  /**
   * Where the code is texted. 'user' (the default): the number `resolveUser` gives. 'entered': the
   * number the user typed into the start request (the form field, or the mobile start's JSON field,
   * named `phone`), read with `defaultCountry` and the destination policy, stored and texted as
   * E.164 (adding, changing or signing up with a number). Requires `proves: 'destination'`.
   */
  destination?: DestinationSource;
  /**
   * Default 'user'. Use 'destination' when `fulfil` relies on the user holding
   * `attempt.destination` (confirming a phone number): see VerificationProof.
   */
  proves?: VerificationProof;
  /**
   * A step-up its start requires, as `kit.requireRecentVerification({ scope, maxAge })` judges a
   * route: a grant of `scope` (declared in `scopes`) made in this browser session, its verification
   * started at most `maxAge` seconds ago. Without one, nothing is sent or counted: the start form is
   * kept server-side and the user is asked to confirm it's you; once they have, they confirm the
   * start, which runs once. Restarts are judged the same way. Web only.
   */
  requireRecentVerification?: ActionStepUp;
  /**
   * Validates the start request and returns the server-side parameters stored with the attempt
   * (e.g. the new payout account). Throw KitError('invalid_action_params') for bad input. Runs on
   * every start, restarts included (then `context.restartParams` holds the earlier parameters).
   * What it returns is kept as JSON, and `fulfil` gets it as JSON reads it back; a value JSON
   * cannot hold (a BigInt, an object holding itself) fails the start before anything is sent.
   */
  prepare?: (req: Request, context: PrepareContext) => JsonValue | Promise<JsonValue>;
  /**
   * Performs the guarded action inside the kit's transaction, with the transaction handle, and
   * commits together with the fulfilment mark, exactly once per session. On PostgreSQL `tx` is the
   * pg PoolClient inside BEGIN ... COMMIT and fulfil may be async (await every query on `tx`); on
   * SQLite `tx` is the better-sqlite3 Database and fulfil must be synchronous: createVerificationKit
   * refuses an `async function`, and a plain function that returns a promise is refused when it
   * runs (the transaction rolls back, nothing is marked, the landing answers 500) and is not called
   * again by that process: what its promise does after the rollback runs outside any transaction,
   * once, not at every retry. The attempts stay pending until fulfil is synchronous. What it returns is
   * ignored (a promise is awaited), so one statement may be the whole of it:
   * `(tx, a) => tx.prepare('...').run(a.userRef, a.destination)`.
   */
  fulfil: (tx: Tx, attempt: VerifiedAttempt) => unknown;
}

/**
 * A step-up scope (requireRecentVerification): a name declared to the kit like an action, so the
 * same checks, start limits, sensitivity and proof apply; its verification writes a grant instead
 * of running an action.
 */
export interface ScopeDefinition {
  /** Registered name, shared with the actions' names; `^[a-z][a-z0-9_-]{0,63}$`. */
  name: string;
  operationSensitivity: OperationSensitivity;
  /** Default 'user'; 'destination' when the guarded code relies on the user holding the number. */
  proves?: VerificationProof;
  /**
   * What the guarded routes do, shown on the confirmation pages ("change your payout account"):
   * one text, or one per locale tag (`{ en: '...', fr: '...' }`, English the fallback).
   */
  label?: string | Readonly<Record<string, string>>;
  /**
   * Where a user goes after verifying for a request that was not a page (a JSON request: the app
   * retries it itself). Default '/'.
   */
  successPath?: string;
}

/** What onOutcome receives, at least once per outcome. */
export interface OutcomeEvent {
  /** Stable across re-deliveries: deduplicate on it. */
  eventId: string;
  outcome: 'fulfilled' | 'failed' | 'expired' | 'superseded';
  source: OutcomeSource;
  sessionId: string;
  userRef: string;
  action: string;
  /**
   * What the action's `prepare` returned. A step-up scope's are the kit's own, with any phone
   * number its guarded request named (in the path, the query or the resource) masked.
   */
  params: JsonValue;
  /**
   * The destination the attempt was for (its code went there, unless a passkey answered instead),
   * masked as the kit's pages show it ("•• 78"): events go to logs and queues, where a full number
   * does not belong (fulfil receives the full number). null only for attempts stored before it was
   * recorded.
   */
  destination: string | null;
  /** The service's reason, for `failed`. */
  reason: string | null;
  /** For `superseded`: the sessionId of the newer attempt that was applied. */
  supersededBy: string | null;
  /** When the outcome was committed (ms). */
  occurredAt: number;
  /** 1 on the first delivery, 2 on the first re-delivery (after a throw or a crash), and so on. */
  delivery: number;
}

/** May be async; a throw or rejection means "not delivered" and the event is delivered again later. */
export type OutcomeHook = (event: OutcomeEvent) => void | Promise<void>;
