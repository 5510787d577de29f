/** How an attempt row of the SQLite store reads back as an Attempt (shared by the store's modules). */
import type { JsonValue } from '../../types.ts';
import type { Attempt } from '../types.ts';

export interface AttemptRow {
  start_seq: number;
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
  created_at: number;
  outcome: Attempt['outcome'];
  failure_reason: string | null;
  fulfilled_at: number | null;
  finished_at: number | null;
  next_check_at: number;
  sweep_checks: number;
  superseded_by: string | null;
  client_id: string | null;
}

export const COLUMNS = `start_seq, state, session_id, user_ref, action, params, destination, return_to, sensitivity, platform,
  created_at, outcome, failure_reason, fulfilled_at, finished_at, next_check_at, sweep_checks, superseded_by,
  service_user_ref, client_id`;

export function toAttempt(row: AttemptRow): Attempt {
  return {
    state: row.state,
    sessionId: row.session_id,
    userRef: row.user_ref,
    serviceUserRef: row.service_user_ref,
    action: row.action,
    params: JSON.parse(row.params) as JsonValue,
    destination: row.destination,
    startSeq: row.start_seq,
    returnTo: row.return_to,
    sensitivity: row.sensitivity,
    platform: row.platform,
    createdAt: row.created_at,
    outcome: row.outcome,
    failureReason: row.failure_reason,
    fulfilledAt: row.fulfilled_at,
    finishedAt: row.finished_at,
    nextCheckAt: row.next_check_at,
    sweepChecks: row.sweep_checks,
    supersededBy: row.superseded_by,
    clientId: row.client_id,
  };
}

/** Where each column of COLUMNS is in a row read as an array of values. */
const AT = Object.fromEntries(COLUMNS.split(',').map((name, i) => [name.trim(), i])) as Record<
  keyof AttemptRow,
  number
>;

/**
 * toAttempt of a row read as an array of values in COLUMNS order (a statement in raw mode): the
 * claim reads a batch at a time, and an object of twenty keys per row costs as much again.
 */
export function toAttemptFromValues(values: readonly unknown[]): Attempt {
  const at = <K extends keyof AttemptRow>(name: K) => values[AT[name]] as AttemptRow[K];
  return toAttempt({
    start_seq: at('start_seq'),
    state: at('state'),
    session_id: at('session_id'),
    user_ref: at('user_ref'),
    service_user_ref: at('service_user_ref'),
    action: at('action'),
    params: at('params'),
    destination: at('destination'),
    return_to: at('return_to'),
    sensitivity: at('sensitivity'),
    platform: at('platform'),
    created_at: at('created_at'),
    outcome: at('outcome'),
    failure_reason: at('failure_reason'),
    fulfilled_at: at('fulfilled_at'),
    finished_at: at('finished_at'),
    next_check_at: at('next_check_at'),
    sweep_checks: at('sweep_checks'),
    superseded_by: at('superseded_by'),
    client_id: at('client_id'),
  });
}
