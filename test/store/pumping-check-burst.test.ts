/**
 * The check before a text (reserveSend) settles for every start of a burst to one country, on
 * SQLite and PostgreSQL: 100 concurrent checks, each with a number of its own block, its own user
 * and its own address, on one store (the app's pool of 10): the first five count their text, the
 * others a refusal under the country, and none rejects (a rejected check fails its start with a
 * 500). Nor does a real user's check among 90 refused attack checks. On PostgreSQL a check whose
 * keys a concurrent check counted under since its reading is read again with the counters locked,
 * so it waits its turn instead of losing every race to the burst; unless the others counted within
 * its answer's headroom: then it counts on its first reading, and a burst far below every threshold
 * decides each check once, while a headroom that runs out at a limit lets no text past it.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { PumpingKey, PumpingReading, PumpingStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const HOUR = 3_600_000;
const H0 = 480_000;
const T0 = H0 * HOUR;
const BURST = 100;

const keysOf = (n: number): PumpingKey[] => [
  { dimension: 'country', key: 'GB' },
  { dimension: 'block', key: `+447400${String(n).padStart(3, '0')}` },
  { dimension: 'address', key: `198.51.${Math.floor(n / 200)}.${n % 200}` },
  { dimension: 'user', key: `user-${n}` },
  { dimension: 'address_country', key: `198.51.${Math.floor(n / 200)}.${n % 200} GB` },
];

describeEachStore('a burst of checks to one country', (kind) => {
  let h: StoreUnderTest;
  let pumping: PumpingStore;
  beforeEach(async () => {
    h = await kind.open();
    pumping = h.store.pumping!;
  });
  afterEach(async () => {
    await h.dispose();
  });

  it(`${BURST} concurrent checks to one country all settle (none fails after its retries)`, async () => {
    const country: PumpingKey = { dimension: 'country', key: 'GB' };
    const decide = (reading: PumpingReading) =>
      reading.counts[0]!.sentThisHour < 5 ? { count: 'text' as const } : { count: 'refusal' as const, keys: [country] };
    const outcomes = await Promise.allSettled(
      Array.from({ length: BURST }, (_, n) =>
        pumping.reserveSend({ keys: keysOf(n), address: keysOf(n)[2]!.key, hour: H0, now: T0 }, decide),
      ),
    );
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    const reasons = [...new Set(failed.map((o) => String((o.reason as Error).message)))];
    expect(failed.length, `checks that failed: ${reasons.join(' | ')}`).toBe(0);
    const reading = await pumping.readPumping({ keys: keysOf(0), address: keysOf(0)[2]!.key, hour: H0, now: T0 });
    expect(reading.counts[0]).toMatchObject({ sentThisHour: 5, refusedThisHour: BURST - 5 });
  });

  it(`the checks of real users (who go on whatever the country's counts) all settle among ${BURST} refused attack checks`, async () => {
    const country: PumpingKey = { dimension: 'country', key: 'GB' };
    // The attack: refused, pressing on the country. Real users who verified before: they go on.
    const refused = () => ({ count: 'refusal' as const, keys: [country] });
    const goesOn = () => ({ count: 'text' as const });
    const real = new Set(Array.from({ length: 10 }, (_, i) => i * 10 + 5));
    const outcomes = await Promise.allSettled(
      Array.from({ length: BURST }, (_, n) =>
        pumping.reserveSend(
          { keys: keysOf(n), address: keysOf(n)[2]!.key, hour: H0, now: T0 },
          real.has(n) ? goesOn : refused,
        ),
      ),
    );
    const failedReal = [...real].filter((n) => outcomes[n]!.status === 'rejected');
    const failedAll = outcomes.filter((o) => o.status === 'rejected').length;
    expect(
      failedReal.length,
      `real users' checks that failed: ${failedReal.length} of ${real.size} (all checks: ${failedAll})`,
    ).toBe(0);
  });

  it(`${BURST} concurrent checks each far below every threshold decide once: within their headroom, none is read again`, async () => {
    let decided = 0;
    const farBelow = () => {
      decided++;
      return { count: 'text' as const, headroom: { keys: [1_000, 1_000, 1_000, 1_000, 1_000], countries: 1_000 } };
    };
    await Promise.all(
      Array.from({ length: BURST }, (_, n) =>
        pumping.reserveSend({ keys: keysOf(n), address: keysOf(n)[2]!.key, hour: H0, now: T0 }, farBelow),
      ),
    );
    expect(decided).toBe(BURST);
    const reading = await pumping.readPumping({ keys: keysOf(0), address: keysOf(0)[2]!.key, hour: H0, now: T0 });
    expect(reading.counts[0]).toMatchObject({ sentThisHour: BURST, refusedThisHour: 0 });
  });

  it(`${BURST} concurrent checks whose headroom runs out at five texts count five texts, not one more`, async () => {
    const country: PumpingKey = { dimension: 'country', key: 'GB' };
    // Five texts this hour at most: a check that read `sent` leaves room for 4 - sent more before its own.
    const fiveTexts = (reading: PumpingReading) => {
      const sent = reading.counts[0]!.sentThisHour;
      if (sent >= 5) return { count: 'refusal' as const, keys: [country] };
      return { count: 'text' as const, headroom: { keys: [4 - sent, 1_000, 1_000, 1_000, 1_000], countries: 1_000 } };
    };
    await Promise.all(
      Array.from({ length: BURST }, (_, n) =>
        pumping.reserveSend({ keys: keysOf(n), address: keysOf(n)[2]!.key, hour: H0, now: T0 }, fiveTexts),
      ),
    );
    const reading = await pumping.readPumping({ keys: keysOf(0), address: keysOf(0)[2]!.key, hour: H0, now: T0 });
    expect(reading.counts[0]).toMatchObject({ sentThisHour: 5, refusedThisHour: BURST - 5 });
  });
});
