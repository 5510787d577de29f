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
