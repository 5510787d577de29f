/** Shared by the orchestrator and its children (no side effects on import). */
import { createHash, randomBytes } from 'node:crypto';
import type { NewAttempt, PumpingOptions } from '../middleware/index.ts';

export interface ConfigureArgs {
  emulatorUrl: string;
  clientId: string;
  secret: string;
  returnUrl: string;
  dbPath: string;
  /** PostgreSQL instead of the SQLite file: the kit's PostgreSQL store, or the baseline on node-postgres. */
  databaseUrl?: string;
  /**
   * The kit's SMS pumping rules (BENCH_ONLY=pumping-cost): its `pumping` option, and each user's
   * number in a country the counters' history holds. Unset: the kit's default, the bench's +1 555 numbers.
   */
  pumping?: Pick<PumpingOptions, 'mode' | 'thresholds'>;
}

/** Inserts seeded attempts in one statement per chunk (the kit's columns; every attempt due in `dueInMs`). */
export const PG_SEED_ATTEMPTS = `INSERT INTO verify_kit_attempts
  (state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at, next_check_at)
  SELECT s, i, u, $4, 'null', $5, 'normal', 'web', $6, $7
  FROM unnest($1::text[], $2::text[], $3::text[]) AS t(s, i, u)`;

export const PG_GRANTS_TABLE = `CREATE TABLE IF NOT EXISTS bench_grants (
  id BIGSERIAL PRIMARY KEY, session_id TEXT NOT NULL, user_ref TEXT NOT NULL)`;
/** The hand-written integration's own attempts table on PostgreSQL (the landing baseline, the sweep floor). */
export const PG_BASELINE_ATTEMPTS_TABLE = `CREATE TABLE IF NOT EXISTS attempts (
  state TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, user_ref TEXT NOT NULL, action TEXT NOT NULL,
  return_to TEXT NOT NULL, outcome TEXT NOT NULL DEFAULT 'pending', created_at BIGINT NOT NULL,
  fulfilled_at BIGINT)`;
/**
 * The index the hand-written integration's own sweep needs, on SQLite and PostgreSQL alike: the spec
 * has it sweep the pending attempts of the last 24 h for users who never return, and without an
 * index each run would read the whole table. It also decides what the landing's mark costs: with
 * `outcome` in an index's predicate a PostgreSQL mark is no longer a HOT update (docs/performance.md).
 * The sweep floor's table has no such index: the floor is the least work a sweep can do, its
 * attempts loaded before the run.
 */
export const BASELINE_PENDING_INDEX = `CREATE INDEX IF NOT EXISTS attempts_pending ON attempts (created_at)
  WHERE outcome = 'pending'`;
/** Seeds the hand-written attempts table: $1 states, $2 session ids, $3 user refs; $4 action, $5 path, $6 created. */
export const PG_BASELINE_SEED_ATTEMPTS = `INSERT INTO attempts (state, session_id, user_ref, action, return_to, created_at)
  SELECT s, i, u, $4, $5, $6 FROM unnest($1::text[], $2::text[], $3::text[]) AS t(s, i, u)`;
export const PG_INSERT_GRANT = 'INSERT INTO bench_grants (session_id, user_ref) VALUES ($1, $2)';

export interface SeedAttempt {
  state: string;
  sessionId: string;
  userRef: string;
}

/**
 * Seeds attempts into PostgreSQL, a chunk per statement: `sql` takes the states, session ids and
 * user refs as $1 to $3 (arrays) and `extra` after them (the kit's table, or the hand-written one).
 */
export async function seedPostgres(
  pool: { query(sql: string, values: unknown[]): Promise<unknown> },
  sql: string,
  attempts: readonly SeedAttempt[],
  extra: unknown[],
): Promise<void> {
  for (let i = 0; i < attempts.length; i += 5000) {
    const chunk = attempts.slice(i, i + 5000);
    const columns = [chunk.map((a) => a.state), chunk.map((a) => a.sessionId), chunk.map((a) => a.userRef)];
    await pool.query(sql, [...columns, ...extra]);
  }
}

export const ACTION = 'grant';
export const SUCCESS_PATH = '/done';

/** The typed-number start's action: texts the number in the start form's `phone` field. */
export const ENTERED_ACTION = 'grant_entered';
/** The country a national number is read in, on both sides. */
export const ENTERED_DEFAULT_COUNTRY = 'GB';

/**
 * The i-th number a user types, a different one each request, half national (a UK mobile, read
 * with the default country) and half international (a French mobile), as people type them.
 */
export function typedNumberOf(i: number): string {
  const six = String(i % 1_000_000).padStart(6, '0');
  return i % 2 === 0 ? `07400 ${six}` : `+33 6 12 ${six.slice(0, 2)} ${six.slice(2, 4)} ${six.slice(4)}`;
}

/** Each bench user's phone number, as an app would keep it on the user's record. */
const destinations = new Map<string, string>();

/**
 * A made-up phone number per user, derived once and then looked up: the kit's resolveUser asks for
 * it on every request, where a real app reads the number it already stored, not a fresh hash.
 */
export function destinationOf(userRef: string): string {
  let destination = destinations.get(userRef);
  if (destination === undefined) {
    const digits = createHash('sha256').update(userRef).digest().readUInt32BE(0) % 10_000_000;
    destination = `+1555${String(digits).padStart(7, '0')}`;
    destinations.set(userRef, destination);
  }
  return destination;
}

/**
 * A US mobile-format number per user (+1 202 ...), for the pumping-cost phase: its country has
 * history. Its exchange starts with 2 to 9, as a valid US number's does (the kit counts others under ZZ).
 */
export function usNumberOf(userRef: string): string {
  const hash = createHash('sha256').update(userRef).digest().readUInt32BE(0);
  return `+1202${2 + (hash % 8)}${String(Math.floor(hash / 8) % 1_000_000).padStart(6, '0')}`;
}

/** The kit's state format: 32 random bytes, base64url (43 characters). */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

export function basicAuthorization(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}

/** A seeded session as a due attempt of the sweep benches: started ten minutes ago, due a minute ago. */
export function dueAttempt(session: SeedAttempt, now: number): NewAttempt {
  return {
    state: session.state,
    sessionId: session.sessionId,
    userRef: session.userRef,
    action: ACTION,
    params: null,
    destination: '+15550100001',
    returnTo: SUCCESS_PATH,
    sensitivity: 'normal',
    platform: 'web',
    createdAt: now - 10 * 60_000,
    nextCheckAt: now - 60_000,
  };
}
