/**
 * The store contract's attempts: an attempt as the start route stores it and as the store reads it
 * back, its fulfilment in one transaction (a group commit's requests and settlements), and the
 * outcome events the after-commit hook is handed. The whole contract is store/types.ts.
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
