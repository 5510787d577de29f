/** How an attempt row of the PostgreSQL store reads back as an Attempt (shared by the store's modules). */
import type { JsonValue } from '../../types.ts';
import type { Attempt } from '../types.ts';

export interface AttemptRow {
  // BIGINT columns arrive as strings.
  start_seq: string;
  state: string;
  session_id: string;
  user_ref: string;
  service_user_ref: string | null;
  action: string;
  params: string;
  destination: string | null;
  return_to: string;
  sensitivity: Attempt['sensitivity'];
  platform: Attempt['platform'];
  created_at: string;
  outcome: Attempt['outcome'];
  failure_reason: string | null;
  fulfilled_at: string | null;
  finished_at: string | null;
  next_check_at: string;
  sweep_checks: number;
  superseded_by: string | null;
  client_id: string | null;
}

export const COLUMNS = `start_seq, state, session_id, user_ref, action, params, destination, return_to, sensitivity,
  platform, created_at, outcome, failure_reason, fulfilled_at, finished_at, next_check_at, sweep_checks, superseded_by,
  service_user_ref, client_id`;

/**
 * An attempt read back as ONE column: its COLUMNS as a JSON array, in order. node-postgres parses a
 * field description and a string per column of every result, so a wide row costs CPU on every
 * query; one JSON text is parsed natively (figures: docs/performance.md). Read with fromAttemptJson.
 */
export const ATTEMPT = `json_build_array(${COLUMNS})::text AS attempt`;

/** A result row holding one attempt as ATTEMPT. */
export interface AttemptJsonRow {
  attempt: string;
}

/** COLUMNS' values as json_build_array writes them (BIGINT and INTEGER as JSON numbers). */
type AttemptTuple = [
  startSeq: number,
  state: string,
  sessionId: string,
  userRef: string,
  action: string,
  params: string,
  destination: string | null,
  returnTo: string,
  sensitivity: Attempt['sensitivity'],
  platform: Attempt['platform'],
  createdAt: number,
  outcome: Attempt['outcome'],
  failureReason: string | null,
  fulfilledAt: number | null,
  finishedAt: number | null,
  nextCheckAt: number,
  sweepChecks: number,
  supersededBy: string | null,
  serviceUserRef: string | null,
  clientId: string | null,
];

export function fromAttemptJson(text: string): Attempt {
  const [startSeq, state, sessionId, userRef, action, params, destination, returnTo, sensitivity, platform, ...rest] =
    JSON.parse(text) as AttemptTuple;
  const [
    createdAt,
    outcome,
    failureReason,
    fulfilledAt,
    finishedAt,
    nextCheckAt,
    sweepChecks,
    supersededBy,
    serviceUserRef,
    clientId,
  ] = rest;
  return {
    state,
    sessionId,
    userRef,
    serviceUserRef,
    action,
    params: JSON.parse(params) as JsonValue,
    destination,
    startSeq,
    returnTo,
    sensitivity,
    platform,
    createdAt,
    outcome,
    failureReason,
    fulfilledAt,
    finishedAt,
    nextCheckAt,
    sweepChecks,
    supersededBy,
    clientId,
  };
}

export const nullableNumber = (value: string | null): number | null => (value === null ? null : Number(value));

export function toAttempt(row: AttemptRow): Attempt {
  return {
    state: row.state,
    sessionId: row.session_id,
    userRef: row.user_ref,
    serviceUserRef: row.service_user_ref,
    action: row.action,
    params: JSON.parse(row.params) as JsonValue,
    destination: row.destination,
    startSeq: Number(row.start_seq),
    returnTo: row.return_to,
    sensitivity: row.sensitivity,
    platform: row.platform,
    createdAt: Number(row.created_at),
    outcome: row.outcome,
    failureReason: row.failure_reason,
    fulfilledAt: nullableNumber(row.fulfilled_at),
    finishedAt: nullableNumber(row.finished_at),
    nextCheckAt: Number(row.next_check_at),
    sweepChecks: row.sweep_checks,
    supersededBy: row.superseded_by,
    clientId: row.client_id,
  };
}
