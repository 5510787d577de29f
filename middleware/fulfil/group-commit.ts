/**
 * How a fulfilment reaches the store: on its own (a batch of one, the landing's and the mobile
 * completion's), or grouped with others that became ready at about the same time (the sweep's),
 * so that many attempts share one commit. Both end in the store's one fulfil path, fulfilBatch.
 *
 * Grouping changes when an attempt commits, never what commits with it: each request keeps its
 * action and mark together in the group (they commit together or not at all), and the
 * store's pending guard still decides who fulfils an attempt that a landing reaches at the same time.
 */
import { onlySettlement, settlementAt } from '../store/batch.ts';
import type { FulfilOnceResult, FulfilRequest, VerifyStore } from '../store/types.ts';

export interface FulfilCommitter<Tx> {
  /** Commits the request's fulfilment; resolves with its result, rejects with its effect's error. */
  fulfil(request: FulfilRequest<Tx>): Promise<FulfilOnceResult>;
  /** No more requests are coming: what is gathering commits now, not at the end of its window. */
  flush(): void;
}

/** Each fulfilment in its own transaction, at once. */
export function commitEach<Tx>(store: Pick<VerifyStore<Tx>, 'fulfilBatch'>): FulfilCommitter<Tx> {
  return { fulfil: async (request) => onlySettlement(await store.fulfilBatch([request])), flush: () => undefined };
}

interface Queued<Tx> {
  request: FulfilRequest<Tx>;
  resolve: (result: FulfilOnceResult) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions {
  /** Most requests in one transaction. */
  maxGroup: number;
  /**
   * Groups committing at once, each on its own connection: a PostgreSQL commit waits for its WAL
   * flush, so another group can work meanwhile. (A SQLite commit is synchronous: one at a time.)
   */
  parallel: number;
  /**
   * How long (ms) a group may gather before it commits, unless it fills up first. 0 = the next turn
   * of the event loop. Every commit costs the same however many it carries (on SQLite most of a
   * fulfilment's CPU), so a caller that is not waiting on each one (the sweep) gathers longer.
   * A function is asked each time a group starts gathering.
   */
  gatherMs?: number | (() => number);
}

/** Commits a group and answers each request; a group that fails as a whole is retried one by one. */
async function settleGroup<Tx>(store: Pick<VerifyStore<Tx>, 'fulfilBatch'>, group: Queued<Tx>[]): Promise<void> {
  let settlements: unknown;
  try {
    settlements = await store.fulfilBatch(group.map((q) => q.request));
  } catch (error) {
    if (group.length === 1) group.forEach((q) => q.reject(error));
    else await Promise.all(group.map((q) => settleGroup(store, [q])));
    return;
  }
  group.forEach((q, i) => settleOne(q, settlements, i));
}

/**
 * Answers one request from the group's settlements. A store of the app's own may answer anything
 * (a getter that throws): reading it is its code, and one that fails fails that request alone,
 * never the rest of the group left waiting.
 */
function settleOne<Tx>(q: Queued<Tx>, settlements: unknown, i: number): void {
  try {
    const settlement = settlementAt(settlements, i);
    if (settlement instanceof Error) q.reject(settlement);
    else if (settlement.ok) q.resolve(settlement.result);
    else q.reject(settlement.error);
  } catch (error) {
    q.reject(error);
  }
}

/**
 * Group commit: requests queue until the next turn of the event loop, then commit together (at
 * most `maxGroup` per transaction); while groups are committing (up to `parallel`), the next one
 * gathers. A group whose transaction fails as a whole (a lock timeout, a deadlock the database
 * broke) is retried one request at a time, so one bad neighbour never fails the others.
 */
export function groupCommitter<Tx>(
  store: Pick<VerifyStore<Tx>, 'fulfilBatch'>,
  { maxGroup, parallel, gatherMs = 0 }: GroupCommitOptions,
): FulfilCommitter<Tx> {
  const queue: Queued<Tx>[] = [];
  let groups = 0;
  /** How long a group gathers (asked when it starts gathering), until flush() says nothing more will join it. */
  const window = typeof gatherMs === 'function' ? gatherMs : () => gatherMs;
  let flushed = false;
  /** The gathering group's scheduled commit: how long it waits, and how to cancel it. */
  let scheduled: { wait: number; cancel: () => void } | undefined;

  const commitNext = async (): Promise<void> => {
    scheduled?.cancel();
    scheduled = undefined;
    const group = queue.splice(0, maxGroup);
    groups++;
    try {
      await settleGroup(store, group);
    } finally {
      groups--;
      if (queue.length > 0) schedule();
    }
  };

  function schedule(): void {
    // The next group gathers while `parallel` groups commit.
    if (groups >= parallel) return;
    // A full group need not wait for the rest of its window, nor any group after flush().
    const wait = queue.length >= maxGroup || flushed ? 0 : (scheduled?.wait ?? window());
    if (scheduled !== undefined && scheduled.wait <= wait) return;
    scheduled?.cancel();
    if (wait > 0) {
      const timer = setTimeout(() => void commitNext(), wait);
      scheduled = { wait, cancel: () => clearTimeout(timer) };
    } else {
      const immediate = setImmediate(() => void commitNext());
      scheduled = { wait, cancel: () => clearImmediate(immediate) };
    }
  }

  return {
    fulfil(request) {
      return new Promise<FulfilOnceResult>((resolve, reject) => {
        queue.push({ request, resolve, reject });
        schedule();
      });
    },
    flush() {
      flushed = true;
      if (queue.length > 0) schedule();
    },
  };
}
