/**
 * The pumping counters' reservation (store/types.ts PumpingStore), the same suite on SQLite and
 * PostgreSQL: reserveSend, its check deciding to send, reads the counts as they were before its text
 * and counts it, concurrent calls each reading a different count; releaseSend gives it back, never below 0; attachSend counts
 * nothing more, and the verification of the send counts in the reservation's hour.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { PumpingKey, PumpingStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const HOUR = 3_600_000;
const H0 = 480_000; // an hour number (ms / 3,600,000), in 2024
const ADDRESS = '192.0.2.1';

const keysOf = (n: number): PumpingKey[] => [
  { dimension: 'country', key: 'NG' },
  { dimension: 'block', key: `+234803${n}` },
  { dimension: 'address', key: ADDRESS },
  { dimension: 'user', key: `user-${n}` },
  { dimension: 'address_country', key: `${ADDRESS} NG` },
];

describeEachStore('pumping reservations', (kind) => {
  let h: StoreUnderTest;
  let pumping: PumpingStore;
  beforeEach(async () => {
    h = await kind.open();
    pumping = h.store.pumping!;
  });
  afterEach(async () => {
    await h.dispose();
  });

  const reserve = (n: number, hour = H0) =>
    pumping.reserveSend({ keys: keysOf(n), address: ADDRESS, hour, now: hour * HOUR }, () => ({ count: 'text' }));
  const country = async (hour = H0) =>
    (await pumping.readPumping({ keys: keysOf(0), address: ADDRESS, hour, now: hour * HOUR })).counts[0]!;

  it('reads the counts as before its own text and counts it; 20 concurrent reservations each read a different count', async () => {
    await pumping.recordSend({ sessionId: 'earlier', keys: keysOf(0), hour: H0 - 1 });
    const first = await reserve(1);
    expect(first.counts[0]).toMatchObject({ sentThisHour: 0, sentLastHour: 1, sentLastDay: 1 });
    const readings = await Promise.all(Array.from({ length: 20 }, (_, n) => reserve(n + 2)));
    const seen = readings.map((r) => r.counts[0]!.sentThisHour).sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 20 }, (_, n) => n + 1));
    // The last 24 hours hold this hour: each read its texts before its own, and the earlier one.
    expect(readings.every((r) => r.counts[0]!.sentLastDay === r.counts[0]!.sentThisHour + 1)).toBe(true);
    expect(await country()).toMatchObject({ sentThisHour: 21, sentLastDay: 22 });
  });

  it('gives a reserved text back, never below 0', async () => {
    await reserve(1);
    await reserve(2);
    await pumping.releaseSend({ keys: keysOf(2), hour: H0 });
    expect(await country()).toMatchObject({ sentThisHour: 1 });
    await pumping.releaseSend({ keys: keysOf(2), hour: H0 });
    await pumping.releaseSend({ keys: keysOf(2), hour: H0 });
    expect((await country()).sentThisHour).toBe(0);
  });

  it("records the send without counting it again, and its verification counts in the reservation's hour", async () => {
    await reserve(1);
    await pumping.attachSend({ sessionId: 's1', keys: keysOf(1), hour: H0 });
    expect(await country()).toMatchObject({ sentThisHour: 1, verifiedThisHour: 0 });
    expect(await pumping.markVerified('s1')).toBe(true);
    expect(await pumping.markVerified('s1')).toBe(false);
    expect(await country(H0 + 1)).toMatchObject({ sentLastHour: 1, verifiedLastHour: 1, sentThisHour: 0 });
  });
});
