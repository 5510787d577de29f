/**
 * Group commit for the start's writes (its new attempt, its pumping counts). A SQLite commit costs
 * about the same however many rows it carries (its WAL frames, its locks), so the writes that
 * concurrent starts make in one turn of the event loop share one IMMEDIATE transaction, each in its
 * own savepoint: a write that throws rolls back alone and rejects only its caller. A write of one
 * statement needs no savepoint (a statement that fails undoes its own changes); a savepoint costs
 * a few microseconds and a copy of every page it touches. Every caller's promise settles after the
 * commit, so no start is answered (and no SMS is sent) on a write that was not stored.
 *
 * The start's budgets run at once instead: its text waits on them, and concurrent starts rarely
 * reach that point in the same turn, so they seldom shared a commit. The writes already queued
 * commit with them, in the same transaction.
 * Not the SMS pumping check, heavier and also waited on: measured at once, it cost a start more
 * than the turn it saved.
 */
import type { Database } from 'better-sqlite3';

/**
 * Queues a synchronous write, all or nothing (a throw rolls back what it wrote); resolves with its
 * result once the transaction holding it commits.
 */
export type StartWrite = <T>(write: () => T) => Promise<T>;

export interface StartWrites {
  write: StartWrite;
  /**
   * Queues a write that changes the database in one statement at most (reads before it are
   * fine): it runs without a savepoint of its own.
   */
  writeStatement: StartWrite;
  /**
   * Runs a write now, all or nothing, in an IMMEDIATE transaction of its own (or in a savepoint of
   * a transaction open on the connection); resolves once it committed.
   */
  writeAtOnce: StartWrite;
  /** Commits what is queued now (the store calls it before it closes the database). */
  flush(): void;
}

interface Queued {
  write: () => unknown;
  /** One statement at most: no savepoint. */
  single: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export function startWrites(db: Database): StartWrites {
  let queue: Queued[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  // Nested in the group's transaction, better-sqlite3 runs each write as a SAVEPOINT.
  const runOne = db.transaction((write: () => unknown) => write());
  const runGroup = db.transaction((group: readonly Queued[]): Outcome[] =>
    group.map(({ write, single }) => {
      try {
        return { ok: true, value: single ? write() : runOne(write) };
      } catch (error) {
        // SQLite rolled the whole transaction back (a full disk, no memory): what the group wrote
        // before is gone too, and what follows would commit on its own. Fail the group.
        if (!db.inTransaction) throw error;
        return { ok: false, error };
      }
    }),
  );

  function flush(): void {
    if (scheduled !== undefined) clearImmediate(scheduled);
    scheduled = undefined;
    const group = queue;
    queue = [];
    if (group.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = runGroup.immediate(group);
    } catch (error) {
      // The transaction itself failed (a lock timeout, a full disk): none of the group was stored.
      for (const queued of group) queued.reject(error);
      return;
    }
    outcomes.forEach((outcome, i) => {
      const queued = group[i] as Queued;
      if (outcome.ok) queued.resolve(outcome.value);
      else queued.reject(outcome.error);
    });
  }

  const enqueue = <T>(write: () => T, single: boolean) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ write, single, resolve: resolve as (value: unknown) => void, reject });
    });
  const queueWrite =
    (single: boolean): StartWrite =>
    <T>(run: () => T) => {
      // Inside a transaction the integrator opened on the shared connection, the write joins it at
      // once (in its own savepoint) and commits with it, as a plain statement would.
      if (db.inTransaction) return promised(() => runOne(run) as T);
      const queued = enqueue(run, single);
      scheduled ??= setImmediate(flush);
      return queued;
    };
  const runAlone = db.transaction((write: () => unknown) => write());
  const writeAtOnce: StartWrite = <T>(run: () => T) => {
    if (db.inTransaction) return promised(() => runOne(run) as T);
    if (queue.length === 0) return promised(() => runAlone.immediate(run) as T);
    // The writes queued for the next turn commit now, with this one: one commit instead of two.
    const committed = enqueue(run, false);
    flush();
    return committed;
  };
  return { write: queueWrite(false), writeStatement: queueWrite(true), writeAtOnce, flush };
}

/** What run returns, or throws, as a promise. */
function promised<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}
