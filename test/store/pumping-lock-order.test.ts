/**
 * The check's count runs concurrently with the other counter writes (markVerified, releaseSend,
 * recordSend, purgePumping) on shared keys, on two instances, and every one of them settles, on
 * SQLite and PostgreSQL; on PostgreSQL none meets a deadlock (its deadlock counter for the database
 * does not move: a deadlock costs its victim deadlock_timeout, 1 s, before it is run again). Every
 * write locks a start's counters in one sorted order, the verification's too.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { PumpingKey, PumpingStore, VerifyStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const HOUR = 3_600_000;
const H0 = 480_000;

const keysOf = (n: number): PumpingKey[] => [
  { dimension: 'country', key: n % 2 ? 'GB' : 'FR' },
  { dimension: 'block', key: `+4474000${n % 3}` },
  { dimension: 'address', key: `198.51.100.${n % 4}` },
  { dimension: 'user', key: `user-${n % 5}` },
  { dimension: 'address_country', key: `198.51.100.${n % 4} ${n % 2 ? 'GB' : 'FR'}` },
];

describeEachStore('the check among the other counter writes', (kind) => {
  let h: StoreUnderTest;
  let pumping: PumpingStore;
  beforeEach(async () => {
    h = await kind.open();
    pumping = h.store.pumping!;
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('meets no deadlock', async () => {
    const other: VerifyStore<unknown> = await h.openAnother();
    const stores = [pumping, other.pumping!];
    // SQLite has no such counter: its writes are serialised in one group commit.
    const deadlocks = async () =>
      kind.name === 'postgres'
        ? Number(
            (
              await h.query<{ n: number }>(
                'SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()',
              )
            )[0]!.n,
          )
        : 0;
    // Sends to verify later.
    for (let n = 0; n < 60; n++) await pumping.recordSend({ sessionId: `s${n}`, keys: keysOf(n), hour: H0 });
    const before = await deadlocks();
    const work: Promise<unknown>[] = [];
    for (let n = 0; n < 300; n++) {
      const store = stores[n % 2]!;
      const keys = keysOf(n);
      const q = { keys, address: keys[2]!.key, hour: H0, now: H0 * HOUR };
      switch (n % 6) {
        case 0:
        case 1:
          work.push(
            store.reserveSend(q, (r) =>
              r.counts[1]!.sentThisHour % 2 ? { count: 'text' } : { count: 'refusal', keys: [keys[0]!, keys[2]!] },
            ),
          );
          break;
        case 2:
          work.push(store.markVerified(`s${n % 60}`));
          break;
        case 3:
          work.push(store.releaseSend({ keys, hour: H0 }));
          break;
        case 4:
          work.push(store.recordSend({ sessionId: `r${n}`, keys, hour: H0 }));
          break;
        case 5:
          work.push(store.purgePumping({ beforeHour: H0 - 1, decisionsBefore: 0, now: H0 * HOUR, limit: 10 }));
          break;
      }
    }
    const settled = await Promise.allSettled(work);
    // A backend publishes its statistics (the deadlock counter) up to a second after its transaction.
    if (kind.name === 'postgres') await new Promise((r) => setTimeout(r, 1100));
    const failed = settled
      .filter((s) => s.status === 'rejected')
      .map((s) => String((s as PromiseRejectedResult).reason));
    expect(failed).toEqual([]);
    expect(await deadlocks()).toBe(before);
  });
});
