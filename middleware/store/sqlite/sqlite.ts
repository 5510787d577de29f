/**
 * The SQLite store on better-sqlite3: WAL, a busy timeout, statements prepared once. Every write
 * that decides something (fulfil, claim) runs in an IMMEDIATE transaction, so processes sharing
 * the file serialise on it instead of racing. This module opens the database and composes the
 * store's parts: its statements (sqlite-sql.ts), migrations (sqlite-schema.ts), fulfil path
 * (sqlite-fulfil.ts), sweep writes (sqlite-sweep.ts), outbox (sqlite-outbox.ts) and support reads
 * and retention (sqlite-reads-and-retention.ts).
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { KitError, KitErrorCode } from '../../errors.ts';
import { startBackgroundCheckpoints } from './sqlite-checkpoints.ts';
import { migrate } from './sqlite-schema.ts';
import { sqliteFulfil } from './sqlite-fulfil.ts';
import { sqliteHousekeeping } from './sqlite-reads-and-retention.ts';
import { sqliteOutbox } from './sqlite-outbox.ts';
import { sqlitePumping } from './sqlite-pumping.ts';
import { toAttempt, type AttemptRow } from './sqlite-rows.ts';
import { sqliteStepUp } from './sqlite-step-up.ts';
import { sqliteSweepPace } from './sqlite-sweep-pace.ts';
import { ENDED_BUDGETS_PER_CLEANUP, prepareAll, SQL, type Statements } from './sqlite-sql.ts';
import { startWrites, type StartWrites } from './sqlite-start-writes.ts';
import { sqliteSweepWrites } from './sqlite-sweep.ts';
import type {
  PumpingStore,
  StartBudget,
  StartBudgetCounter,
  StartBudgetRefusal,
  StepUpStore,
  VerifyStore,
} from '../types.ts';

/** Options of createSqliteStore. */
export interface SqliteStoreOptions {
  /** A file path, or an open better-sqlite3 Database shared with the integrator's own tables. */
  database: string | Database;
  /** How long a writer waits for another process's lock. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * Who copies the WAL back into the database file. 'background' (default): a worker thread, so no
   * request pays for a checkpoint. 'on-commit': SQLite's default, inside the commit that fills the WAL.
   */
  checkpoints?: 'background' | 'on-commit';
}

/** The SQLite store, with its open database (`db`). */
export type SqliteStore = VerifyStore<Database> &
  StartBudgetCounter & { readonly db: Database; readonly stepUp: StepUpStore; readonly pumping: PumpingStore };

/** Ended start budget counters are deleted at most this often (per store). */
const BUDGET_CLEANUP_INTERVAL_MS = 5 * 60_000;

function assertDatabaseOption(database: unknown): asserts database is string | Database {
  if (typeof database !== 'string' && !(database instanceof BetterSqlite3)) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'createSqliteStore: `database` must be a file path or an open better-sqlite3 Database.',
    );
  }
}

/** A misspelt name quoted; anything else (a phone number given by mistake, an object) by its type. */
function shownName(value: unknown): string {
  return typeof value === 'string' && /^[a-z][a-z_-]{0,39}$/i.test(value) ? JSON.stringify(value) : `a ${typeof value}`;
}

function assertCheckpointsOption(checkpoints: unknown): asserts checkpoints is SqliteStoreOptions['checkpoints'] {
  if (checkpoints !== undefined && checkpoints !== 'background' && checkpoints !== 'on-commit') {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `createSqliteStore: \`checkpoints\` must be 'background' or 'on-commit' (or left out); got ${shownName(checkpoints)}.`,
    );
  }
}

/** A lock wait SQLite can keep: a wrong one ('x', -1) would be taken as no wait, and busy writers fail at once. */
function assertBusyTimeoutOption(busyTimeoutMs: unknown): asserts busyTimeoutMs is number | undefined {
  if (
    busyTimeoutMs !== undefined &&
    !(Number.isInteger(busyTimeoutMs) && (busyTimeoutMs as number) >= 0 && (busyTimeoutMs as number) <= 2 ** 31 - 1)
  ) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `createSqliteStore: \`busyTimeoutMs\` must be a whole number of milliseconds from 0 to 2147483647 (or left out for 5000); got ${typeof busyTimeoutMs === 'number' ? String(busyTimeoutMs) : typeof busyTimeoutMs}.`,
    );
  }
}

function openDatabase(database: string | Database, busyTimeoutMs: number): { db: Database; owned: boolean } {
  const owned = typeof database === 'string';
  const db = owned ? new BetterSqlite3(database) : database;
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  if (!db.memory) db.pragma('journal_mode = WAL');
  // WAL + NORMAL is durable across process crashes (only an OS crash can lose the last commit).
  db.pragma('synchronous = NORMAL');
  return { db, owned };
}

/** The row that says `member` was counted in `key`'s window ("seen:" never starts a budget's own key). */
function budgetMemberKey(key: string, member: string): string {
  return `seen:${key}:${member}`;
}

/** Thrown inside the budgets' savepoint to roll back every spend when one budget refused. */
class BudgetsRefused extends Error {
  constructor(readonly refusals: StartBudgetRefusal[]) {
    super('start budgets refused');
  }
}

/**
 * consumeStartBudgets: all of a start's budgets in one transaction, at once (the start waits on
 * them before its text). Now and then the ended counters are deleted first, in a transaction of
 * their own, so a refused start (whose transaction rolls back) never undoes the cleanup; the next
 * cleanup is scheduled only once this one committed.
 */
function sqliteStartBudgets(
  statements: Statements,
  { write, writeAtOnce }: Pick<StartWrites, 'write' | 'writeAtOnce'>,
): StartBudgetCounter {
  let nextBudgetCleanupAt = 0;
  let cleaning: Promise<void> | undefined;
  const cleanEnded = (now: number): void => {
    if (now < nextBudgetCleanupAt || cleaning !== undefined) return;
    cleaning = writeAtOnce(() => statements.deleteEndedBudgets.run(now).changes)
      .then((deleted) => {
        // A full batch means more are waiting: clean again on the next start.
        nextBudgetCleanupAt = deleted < ENDED_BUDGETS_PER_CLEANUP ? now + BUDGET_CLEANUP_INTERVAL_MS : now;
      })
      // Not committed (a lock timeout): the next start tries again.
      .catch(() => undefined)
      .finally(() => {
        cleaning = undefined;
      });
  };
  const spend = (key: string, points: number, durationMs: number, now: number): boolean =>
    statements.spendBudget.run({ key, points, now, newWindowEndsAt: now + durationMs }).changes === 1;
  // True when spent (or nothing to spend: a member already counted in the open window).
  const spendOne = ({ key, points, durationMs, member }: StartBudget, now: number): boolean => {
    if (member === undefined) return spend(key, points, durationMs, now);
    const marker = budgetMemberKey(key, member);
    const row = statements.budgetMember.get({ key, marker }) as { window_ends_at: number; counted: 0 | 1 } | undefined;
    const open = row !== undefined && row.window_ends_at > now;
    if (open && row.counted === 1) return true;
    if (!spend(key, points, durationMs, now)) return false;
    // The spend kept the open window, or started one ending a duration from now: no read needed.
    statements.markBudgetMember.run({ marker, windowEndsAt: open ? row.window_ends_at : now + durationMs });
    return true;
  };
  // Under the write lock, spend every budget; if one is used up, throw, and its transaction
  // rolls all of them back: no other start can slip between, and a refused start spends nothing.
  const spendAll = (budgets: readonly StartBudget[], now: number): void => {
    const refusals = budgets.flatMap((budget, index) => {
      if (spendOne(budget, now)) return [];
      const row = statements.budgetRow.get(budget.key) as { window_ends_at: number } | undefined;
      return [{ budget: index, retryAfterMs: (row?.window_ends_at ?? now) - now }];
    });
    if (refusals.length > 0) throw new BudgetsRefused(refusals);
  };
  return {
    async consumeStartBudgets({ budgets, now }) {
      cleanEnded(now);
      try {
        await writeAtOnce(() => spendAll(budgets, now));
        return [];
      } catch (error) {
        if (error instanceof BudgetsRefused) return error.refusals;
        throw error;
      }
    },
    async refundStartBudgets({ budgets, spentAt }) {
      await write(() => {
        for (const { key, durationMs } of budgets) statements.refundBudget.run({ key, spentAt, durationMs });
      });
    },
  };
}

/** The SQLite store (better-sqlite3): your tables share the kit's transaction. */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  assertDatabaseOption(options.database);
  assertCheckpointsOption(options.checkpoints);
  assertBusyTimeoutOption(options.busyTimeoutMs);
  const { db, owned } = openDatabase(options.database, options.busyTimeoutMs ?? 5000);
  migrate(db);
  const statements = prepareAll(db, SQL);
  const checkpointer = options.checkpoints === 'on-commit' ? undefined : startBackgroundCheckpoints(db);
  const starts = startWrites(db);
  return {
    db,
    // better-sqlite3 transactions are synchronous: an action's fulfil must be too.
    synchronousTransactions: true,
    async insertAttempt(attempt) {
      const row = {
        ...attempt,
        params: JSON.stringify(attempt.params),
        serviceUserRef: attempt.serviceUserRef ?? null,
        clientId: attempt.clientId ?? null,
      };
      await starts.writeStatement(() => statements.insert.run(row));
    },
    async findAttemptByState(state) {
      const row = statements.byState.get(state) as AttemptRow | undefined;
      return row === undefined ? undefined : toAttempt(row);
    },
    ...sqliteFulfil(db, statements),
    ...sqliteSweepWrites(db, statements),
    ...sqliteOutbox(db, statements),
    ...sqliteStartBudgets(statements, starts),
    ...sqliteSweepPace(db, statements),
    ...sqliteHousekeeping(db),
    stepUp: sqliteStepUp(db),
    pumping: sqlitePumping(db, starts),
    async close() {
      if (db.open) starts.flush();
      await checkpointer?.stop();
      if (owned && db.open) db.close();
    },
  };
}
