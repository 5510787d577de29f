/** The store contract's support reads and retention: attempts as kept, and what retention removes (store/types.ts). */
import type { OutcomeSource } from '../types.ts';
import type { Attempt, AttemptOutcome } from './attempt-types.ts';

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
