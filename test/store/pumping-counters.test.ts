/**
 * The SMS pumping counters (store/types.ts PumpingStore), the same suite on SQLite and PostgreSQL:
 * a send counts under each of its keys in its hour, a verification counts once under the keys and
 * hour of its send, whichever instance learns it, the windows the thresholds read, the address's
 * countries without a verification, the operators' rules, the decisions, and the purge.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { PumpingKey, PumpingReading, PumpingStore, VerifyStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const HOUR = 3_600_000;
const H0 = 480_000; // an hour number (ms / 3,600,000), in 2024
const T0 = H0 * HOUR;

const keysOf = (country: string, block: string, address: string): PumpingKey[] => [
  { dimension: 'country', key: country },
  { dimension: 'block', key: block },
  { dimension: 'address', key: address },
  { dimension: 'user', key: `user-${block}` },
  { dimension: 'address_country', key: `${address} ${country}` },
];

describeEachStore('pumping counters', (kind) => {
  let h: StoreUnderTest;
  let pumping: PumpingStore;
  beforeEach(async () => {
    h = await kind.open();
    pumping = h.store.pumping!;
  });
  afterEach(async () => {
    await h.dispose();
  });

  const read = (keys: PumpingKey[], address: string, hour: number) =>
    pumping.readPumping({ keys, address, hour, now: hour * HOUR });

  it('counts each send under every key in its hour, and a verification once, in the hour of its send', async () => {
    const fr = keysOf('FR', '+33612345', '192.0.2.1');
    await pumping.recordSend({ sessionId: 's1', keys: fr, hour: H0 });
    await pumping.recordSend({ sessionId: 's2', keys: fr, hour: H0 });
    // The same session again (a retried write) counts nothing more.
    await pumping.recordSend({ sessionId: 's2', keys: fr, hour: H0 });
    await pumping.recordSend({ sessionId: 's3', keys: fr, hour: H0 + 1 });
    expect(await pumping.markVerified('s1')).toBe(true);
    expect(await pumping.markVerified('s1')).toBe(false);
    expect(await pumping.markVerified('never-sent')).toBe(false);

    const reading = await read(fr, '192.0.2.1', H0 + 1);
    expect(reading.counts).toHaveLength(5);
    for (const count of reading.counts) {
      expect(count).toEqual({
        sentThisHour: 1,
        verifiedThisHour: 0,
        sentLastHour: 2,
        verifiedLastHour: 1,
        sentLastDay: 3,
        verifiedLastDay: 1,
        maxVerifiedDay: 1,
        refusedThisHour: 0,
        refusedLastHour: 0,
      });
    }
    // The last day is the 24 hours up to this one: 23 hours on, H0's texts are in it; 24 hours on, gone.
    expect((await read(fr.slice(0, 1), '192.0.2.1', H0 + 23)).counts[0]).toMatchObject({
      sentLastDay: 3,
      verifiedLastDay: 1,
    });
    expect((await read(fr.slice(0, 1), '192.0.2.1', H0 + 24)).counts[0]).toMatchObject({
      sentLastDay: 1,
      verifiedLastDay: 0,
    });
    // A day later the day's window has moved on; the 14-day maximum still holds the verification.
    const later = await read(fr.slice(0, 1), '192.0.2.1', H0 + 25);
    expect(later.counts[0]).toMatchObject({ sentLastDay: 0, verifiedLastDay: 0, maxVerifiedDay: 1 });
    const gone = await read(fr.slice(0, 1), '192.0.2.1', H0 + 14 * 24);
    expect(gone.counts[0]!.maxVerifiedDay).toBe(0);
  });

  it('the 14-day maximum is the best rolling day, not the sum', async () => {
    const de = keysOf('DE', '+4915123', '192.0.2.9').slice(0, 1);
    for (let day = 0; day < 5; day++) {
      for (let n = 0; n < day + 1; n++) {
        const sessionId = `d${day}-${n}`;
        await pumping.recordSend({ sessionId, keys: de, hour: H0 + day * 24 });
        await pumping.markVerified(sessionId);
      }
    }
    const reading = await read(de, '192.0.2.9', H0 + 4 * 24);
    expect(reading.counts[0]).toMatchObject({ verifiedLastDay: 5, maxVerifiedDay: 5 });
    const afterwards = await read(de, '192.0.2.9', H0 + 6 * 24);
    expect(afterwards.counts[0]).toMatchObject({ verifiedLastDay: 0, maxVerifiedDay: 5 });
  });

  it('a rolling day holds every hour of it: verifications hours apart count as one day, for the maximum and for operators', async () => {
    const de = keysOf('DE', '+4915124', '192.0.2.10').slice(0, 1);
    for (const [n, hour] of [H0, H0 + 5, H0 + 11, H0 + 23].entries()) {
      await pumping.recordSend({ sessionId: `h${n}`, keys: de, hour });
      await pumping.markVerified(`h${n}`);
    }
    const nextDay = await read(de, '192.0.2.10', H0 + 23 + 24);
    expect(nextDay.counts[0]).toMatchObject({ verifiedLastDay: 0, maxVerifiedDay: 4 });
    expect(await pumping.countsByDay({ dimension: 'country', hour: H0 + 23 + 24, days: 3 })).toEqual([
      { key: 'DE', daysAgo: 1, sent: 4, verified: 4 },
    ]);
  });

  it("counts the distinct countries an address texted without one verification from it, that address's only", async () => {
    const address = '2001:db8:1:2::/64';
    for (const [n, country] of ['GB', 'NG', 'PK', 'ID'].entries()) {
      await pumping.recordSend({ sessionId: `c${n}`, keys: keysOf(country, `+${n}000`, address), hour: H0 });
    }
    // Another address that shares the first characters is another address.
    await pumping.recordSend({ sessionId: 'other', keys: keysOf('VN', '+84000', '2001:db8:1:2::/640'), hour: H0 });
    expect((await read([], address, H0)).unverifiedCountries).toBe(4);
    await pumping.markVerified('c0');
    expect((await read([], address, H0)).unverifiedCountries).toBe(3);
    expect((await read([], address, H0 + 24)).unverifiedCountries).toBe(0);
  });

  it("keeps an operator's rule until it ends, reads it with the keys it names, and clears it", async () => {
    const block = { dimension: 'block', key: '+447700900' } as const;
    await pumping.setRule({ ...block, rule: 'block', until: T0 + 12 * HOUR, setAt: T0 });
    await pumping.setRule({ dimension: 'country', key: 'FR', rule: 'allow', until: T0 + HOUR, setAt: T0 });
    const reading = await pumping.readPumping({ keys: [block], address: 'x', hour: H0, now: T0 });
    expect(reading.rules).toEqual([{ ...block, rule: 'block', until: T0 + 12 * HOUR, setAt: T0 }]);
    expect((await pumping.listRules(T0 + 2 * HOUR)).map((r) => r.key)).toEqual(['+447700900']);
    expect(await pumping.clearRule(block)).toBe(true);
    expect(await pumping.clearRule(block)).toBe(false);
    expect(await pumping.listRules(T0)).toHaveLength(1);
  });

  it('records decisions, lists them newest first, and purges what is older than the windows read', async () => {
    const decision = { country: 'NG', block: '+2348031234', address: '198.51.100.7', userRef: 'u1' };
    await pumping.recordDecision({ ...decision, decidedAt: T0, decision: 'warned', reasons: ['country_hourly'] });
    await pumping.recordDecision({
      ...decision,
      decidedAt: T0 + 1000,
      decision: 'refused',
      reasons: ['country_hourly', 'block_daily'],
    });
    const listed = await pumping.listDecisions({ since: T0, limit: 10 });
    expect(listed.map((d) => [d.decision, d.reasons])).toEqual([
      ['refused', ['country_hourly', 'block_daily']],
      ['warned', ['country_hourly']],
    ]);
    await pumping.recordSend({ sessionId: 'old', keys: keysOf('NG', '+2348031234', '198.51.100.7'), hour: H0 });
    await pumping.setRule({ dimension: 'country', key: 'NG', rule: 'block', until: T0 + HOUR, setAt: T0 });
    const purged = await pumping.purgePumping({
      beforeHour: H0 + 1,
      decisionsBefore: T0 + 1,
      now: T0 + 2 * HOUR,
      limit: 100,
    });
    // 5 counters, 1 send, 1 decision, 1 ended rule.
    expect(purged).toBe(8);
    expect((await pumping.listDecisions({ since: 0, limit: 10 })).map((d) => d.decision)).toEqual(['refused']);
    expect((await h.query<{ n: number }>('SELECT count(*) AS n FROM verify_kit_pumping_counts'))[0]!.n).toBe(0);
  });

  it('counts a refusal under the keys the check names, in its hour, on any instance, and no text', async () => {
    const other: VerifyStore<unknown> = await h.openAnother();
    const keys = keysOf('NG', '+2348031234', '198.51.100.7');
    const [country, block] = keys;
    const refusedUnder = (under: PumpingKey[]) => () => ({ count: 'refusal' as const, keys: under });
    const check = (store: PumpingStore, hour: number, under: PumpingKey[]) =>
      store.reserveSend({ keys, address: '198.51.100.7', hour, now: hour * HOUR }, refusedUnder(under));
    await Promise.all([
      check(pumping, H0, [country!]),
      check(other.pumping!, H0, [country!, block!]),
      check(pumping, H0 + 1, [country!]),
      // A refusal under no key counts nothing.
      check(pumping, H0 + 1, []),
    ]);
    const decision = { country: 'NG', block: '+2348031234', address: '198.51.100.7', userRef: 'u1' };
    await pumping.recordDecision({ ...decision, decidedAt: T0, decision: 'refused', reasons: ['country_hourly'] });
    const reading = await read(keys, '198.51.100.7', H0 + 1);
    expect(reading.counts.map((c) => [c.refusedThisHour, c.refusedLastHour])).toEqual([
      [1, 2],
      [0, 1],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    // A refusal is no text: nothing sent, nothing unverified.
    expect(reading.counts[0]).toMatchObject({ sentLastDay: 0, verifiedLastDay: 0 });
    expect(await pumping.listDecisions({ since: 0, limit: 10 })).toHaveLength(1);
  });

  it('counts a text only when the check decides so, each concurrent check deciding on every text counted before its own', async () => {
    const other: VerifyStore<unknown> = await h.openAnother();
    const keys = keysOf('GB', '+447400123', '203.0.113.9');
    const [country] = keys;
    // At most five texts this hour; past them each check counts a refusal under the country.
    const fiveTexts = (reading: PumpingReading) =>
      reading.counts[0]!.sentThisHour < 5
        ? { count: 'text' as const }
        : { count: 'refusal' as const, keys: [country!] };
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 24 }, async (_, n) => {
        const store = n % 2 === 0 ? pumping : other.pumping!;
        const reading = await store.reserveSend({ keys, address: '203.0.113.9', hour: H0, now: T0 }, fiveTexts);
        seen.push(reading.counts[0]!.sentThisHour);
      }),
    );
    const reading = await read(keys, '203.0.113.9', H0);
    expect(reading.counts[0]).toMatchObject({ sentThisHour: 5, refusedThisHour: 19 });
    // The refused checks counted no text another could read: the other keys hold the five alone.
    for (const count of reading.counts) expect(count.sentThisHour).toBe(5);
    // Each check returned the reading it decided on: five read 0 to 4 texts before theirs, the others five.
    expect(seen.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, ...Array<number>(19).fill(5)]);
  });

  it('with sure limits, each concurrent check still decides on every text counted before its own', async () => {
    const other: VerifyStore<unknown> = await h.openAnother();
    const keys = keysOf('GB', '+447400456', '203.0.113.10');
    const [country] = keys;
    const fiveTexts = (reading: PumpingReading) =>
      reading.counts[0]!.sentThisHour < 5
        ? { count: 'text' as const }
        : { count: 'refusal' as const, keys: [country!] };
    // The same five as limits a store may count within as it reads: fewer than five unverified texts.
    const open = { daily: 1e9, hourly: 1e9, refusals: 1e9 };
    const sure = { keys: keys.map((_, i) => (i === 0 ? { ...open, hourly: 5 } : open)), countries: 1e9 };
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 24 }, async (_, n) => {
        const store = n % 2 === 0 ? pumping : other.pumping!;
        const query = { keys, address: '203.0.113.10', hour: H0, now: T0, sure };
        seen.push((await store.reserveSend(query, fiveTexts)).counts[0]!.sentThisHour);
      }),
    );
    const reading = await read(keys, '203.0.113.10', H0);
    expect(reading.counts[0]).toMatchObject({ sentThisHour: 5, refusedThisHour: 19 });
    for (const count of reading.counts) expect(count.sentThisHour).toBe(5);
    expect(seen.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, ...Array<number>(19).fill(5)]);
  });

  it('a text counted within sure limits that the check then refuses is given back, and the refusal counted', async () => {
    const keys = keysOf('NG', '+2348031234', '198.51.100.20');
    const open = { daily: 1e9, hourly: 1e9, refusals: 1e9 };
    const sure = { keys: keys.map(() => open), countries: 1e9 };
    const query = { keys, address: '198.51.100.20', hour: H0, now: T0, sure };
    const reading = await pumping.reserveSend(query, () => ({ count: 'refusal', keys: [keys[0]!] }));
    // The reading is of the counts before the check: its own text is not in it.
    expect(reading.counts[0]).toMatchObject({ sentThisHour: 0, sentLastDay: 0 });
    const after = await read(keys, '198.51.100.20', H0);
    expect(after.counts.map((c) => [c.sentThisHour, c.refusedThisHour])).toEqual([
      [0, 1],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    expect(after.unverifiedCountries).toBe(0);
  });

  it('two instances share the counters: a verification read by one moves the counts the other sent', async () => {
    const other: VerifyStore<unknown> = await h.openAnother();
    const keys = keysOf('PK', '+92300123', '203.0.113.5');
    await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        (n % 2 === 0 ? pumping : other.pumping!).recordSend({ sessionId: `p${n}`, keys, hour: H0 }),
      ),
    );
    const marks = await Promise.all(
      ['p1', 'p1', 'p2', 'p2'].map((s, n) => (n % 2 === 0 ? pumping : other.pumping!).markVerified(s)),
    );
    expect(marks.filter(Boolean)).toHaveLength(2);
    const reading = await other.pumping!.readPumping({ keys, address: '203.0.113.5', hour: H0, now: T0 });
    for (const count of reading.counts) expect(count).toMatchObject({ sentThisHour: 20, verifiedThisHour: 2 });
  });

  it('lists sent and verified per key and day for operators', async () => {
    await pumping.recordSend({ sessionId: 'a', keys: keysOf('FR', '+33611111', '192.0.2.1'), hour: H0 });
    await pumping.recordSend({ sessionId: 'b', keys: keysOf('FR', '+33622222', '192.0.2.2'), hour: H0 + 24 });
    await pumping.markVerified('b');
    expect(await pumping.countsByDay({ dimension: 'country', hour: H0 + 24, days: 7 })).toEqual([
      { key: 'FR', daysAgo: 0, sent: 1, verified: 1 },
      { key: 'FR', daysAgo: 1, sent: 1, verified: 0 },
    ]);
  });
});
