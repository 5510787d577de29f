/**
 * Probe (PostgreSQL): the check's count (COUNT_PUMPING) run concurrently with markVerified,
 * releaseSend, recordSend, attachSend and purgePumping on shared keys, on two instances, meets no
 * deadlock: PostgreSQL's deadlock counter for the database does not move (a deadlock costs its
 * victim deadlock_timeout, 1 s, and is retried at most 4 times).
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
    if (kind.name !== 'postgres') return;
    const other: VerifyStore<unknown> = await h.openAnother();
    const stores = [pumping, other.pumping!];
    const deadlocks = async () =>
      Number((await h.query<{ n: number }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()'))[0]!.n);
    // Sends to verify later.
    for (let n = 0; n < 60; n++) await pumping.recordSend({ sessionId: `s${n}`, keys: keysOf(n), hour: H0 });
    const before = await deadlocks();
    const began = Date.now();
    const work: Promise<unknown>[] = [];
    for (let n = 0; n < 300; n++) {
      const store = stores[n % 2]!;
      const keys = keysOf(n);
      const q = { keys, address: keys[2]!.key, hour: H0, now: H0 * HOUR };
      switch (n % 6) {
        case 0:
        case 1:
          work.push(store.reserveSend(q, (r) => (r.counts[1]!.sentThisHour % 2 ? { count: 'text' } : { count: 'refusal', keys: [keys[0]!, keys[2]!] })));
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
    await new Promise((r) => setTimeout(r, 800));
    const failed = settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason));
    console.log('took', Date.now() - began, 'ms; failed', failed.length, [...new Set(failed)].slice(0, 3));
    expect(await deadlocks()).toBe(before);
  });
});
