/**
 * The PostgreSQL store on node-postgres (`pg`), for apps that run as several instances. The
 * integrator passes their own Pool; the kit's tables live beside theirs, and an action's fulfil
 * receives the pool client that holds the kit's open transaction (BEGIN ... COMMIT), so its
 * writes commit together with the fulfilment mark, or not at all.
 *
 * Who wins is decided by locks, never by the application: the fulfilment mark is a conditional
 * UPDATE (a concurrent one waits for the first to commit, then finds nothing pending); with
 * ordering 'latest' every fulfilment of one user's attempts of one action first takes a
 * transaction-scoped advisory lock on that pair, so the newest-wins decision cannot race; sweep
 * and outbox claims take rows with FOR UPDATE SKIP LOCKED and a lease. Outcome events are written
 * in the transaction that records the outcome.
 *
 * This module checks the options and composes the store's parts: its statements (postgres-sql.ts),
 * migrations (postgres-schema.ts), queries and transactions (postgres-query.ts), fulfil path
 * (postgres-fulfil.ts), sweep writes (postgres-sweep.ts), outbox (postgres-outbox.ts) and support
 * reads and retention (postgres-reads-and-retention.ts).
 */
import type { Pool, PoolClient } from 'pg';
import { KitError, KitErrorCode } from '../../errors.ts';
import { postgresFulfil } from './postgres-fulfil.ts';
import { postgresHousekeeping } from './postgres-reads-and-retention.ts';
import { postgresOutbox } from './postgres-outbox.ts';
import { postgresPumping } from './postgres-pumping.ts';
import { startWrites } from './postgres-start-writes.ts';
import { query, type PostgresDb } from './postgres-query.ts';
import { fromAttemptJson, type AttemptJsonRow } from './postgres-rows.ts';
import { migrate } from './postgres-schema.ts';
import { ENDED_BUDGETS_PER_CLEANUP } from './postgres-budgets-sql.ts';
import { postgresSweepWrites } from './postgres-sweep.ts';
import { postgresStepUp } from './postgres-step-up.ts';
import { postgresSweepPace } from './postgres-sweep-pace.ts';
import type { PumpingStore, StartBudget, StartBudgetCounter, StepUpStore, VerifyStore } from '../types.ts';

/** Options of createPostgresStore. */
export interface PostgresStoreOptions {
  /** The app's node-postgres Pool. The store never ends it: the pool is yours to close. */
  pool: Pool;
}

/** The PostgreSQL store; `ready` settles when its migrations are done. */
export type PostgresStore = VerifyStore<PoolClient> &
  StartBudgetCounter & {
    readonly kind: 'postgres';
    readonly pool: Pool;
    readonly stepUp: StepUpStore;
    readonly pumping: PumpingStore;
    /**
     * The migrations the store started with: resolves once the kit's tables are migrated (await it at
     * startup to fail fast). Every store call waits for the migrations; after a run that failed, the
     * next call runs them again.
     */
    readonly ready: Promise<void>;
  };

/** Ended start budget counters are deleted at most this often (per store). */
const BUDGET_CLEANUP_INTERVAL_MS = 5 * 60_000;

function isPool(value: unknown): value is Pool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Pool).connect === 'function' &&
    typeof (value as Pool).query === 'function' &&
    typeof (value as Pool).end === 'function'
  );
}

function assertPoolOption(options: unknown): asserts options is PostgresStoreOptions {
  if (typeof options !== 'object' || options === null || !isPool((options as { pool?: unknown }).pool)) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'createPostgresStore: `pool` must be a node-postgres Pool, ' +
        'e.g. new pg.Pool({ connectionString: process.env.DATABASE_URL }).',
    );
  }
}

/** A budget consume refused (its retry_after_ms), or, when it counted the start, one it counted. */
interface ConsumeRow {
  budget_index: number;
  retry_after_ms: string | null;
  window_ends_at: string;
}

/**
 * consumeStartBudgets: one statement (one transaction) per start, with the ended counters cleaned
 * now and then. A refund names the window each budget was counted in by its end, kept by the budget
 * objects the start limits passed (their receipt gives the same back): on an instance whose clock
 * runs ahead, the start was counted at the database's time plus a second, not at its `spentAt`.
 */
function postgresStartBudgets(db: PostgresDb): StartBudgetCounter {
  let nextBudgetCleanupAt = 0;
  const countedIn = new WeakMap<StartBudget, { now: number; windowEndsAt: string }>();
  return {
    async consumeStartBudgets({ budgets, now }) {
      const values = [
        budgets.map((b) => b.key),
        budgets.map((b) => b.points),
        budgets.map((b) => b.durationMs),
        budgets.map((b) => b.member ?? null),
        now,
      ];
      const { rows } = await query<ConsumeRow>(db, 'consumeStartBudgets', values);
      if (now >= nextBudgetCleanupAt) {
        const deleted = (await query(db, 'deleteEndedBudgets', [now])).rowCount ?? 0;
        // A full batch means more are waiting: clean again on the next start.
        nextBudgetCleanupAt = deleted < ENDED_BUDGETS_PER_CLEANUP ? now + BUDGET_CLEANUP_INTERVAL_MS : now;
      }
      const refusals = [];
      for (const row of rows) {
        const budget = budgets[row.budget_index];
        if (row.retry_after_ms !== null)
          refusals.push({ budget: row.budget_index, retryAfterMs: Number(row.retry_after_ms) });
        else if (budget !== undefined) countedIn.set(budget, { now, windowEndsAt: row.window_ends_at });
      }
      return refusals;
    },
    async refundStartBudgets({ budgets, spentAt }) {
      // The window of the start counted at spentAt: known when this store counted it with these budgets.
      const ends = budgets.map((b) => {
        const counted = countedIn.get(b);
        return counted?.now === spentAt ? counted.windowEndsAt : null;
      });
      await query(db, 'refundStartBudgets', [
        budgets.map((b) => b.key),
        budgets.map((b) => b.durationMs),
        ends,
        spentAt,
      ]);
    },
  };
}

/**
 * The store's access to the pool, its migrations run once they succeed: a run that failed (the
 * database unreachable or restarting as the app started) is reported by the calls waiting on it,
 * and the next call runs them again, so the store works once the database is back. `first` is the
 * run started with the store (its `ready`).
 */
function migratedPool(pool: Pool): { db: PostgresDb; first: Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () =>
    (running = migrate(pool).catch((error: unknown) => {
      running = undefined;
      throw error;
    }));
  const first = run();
  // A failed migration is reported by every call waiting on it (and by `ready`); never as an unhandled rejection.
  first.catch(() => {});
  return {
    db: {
      pool,
      get ready() {
        return running ?? run();
      },
    },
    first,
  };
}

/** The PostgreSQL store (node-postgres Pool), for several instances of the app. */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  assertPoolOption(options);
  const { pool } = options;
  const { db, first: ready } = migratedPool(pool);
  const writes = startWrites(db);
  return {
    kind: 'postgres',
    pool,
    ready,
    // With the record of its text's send, when the start asks for both in one turn.
    insertAttempt: writes.insertAttempt,
    async findAttemptByState(state) {
      const { rows } = await query<AttemptJsonRow>(db, 'byState', [state]);
      return rows[0] === undefined ? undefined : fromAttemptJson(rows[0].attempt);
    },
    ...postgresFulfil(db),
    ...postgresSweepWrites(db),
    ...postgresOutbox(db),
    ...postgresStartBudgets(db),
    ...postgresSweepPace(db),
    ...postgresHousekeeping(db),
    stepUp: postgresStepUp(db),
    pumping: postgresPumping(db, writes.attachSend),
    async close() {
      // The pool belongs to the app; only wait for a migration still running.
      await ready.catch(() => {});
    },
  };
}
