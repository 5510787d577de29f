/**
 * On PostgreSQL a check counts on its reading when others counted within its answer's headroom;
 * the address-countries rule (the countries one address texts without a verification) is judged
 * on countries, not on the address's texts. A text given back (a start its budgets, beforeCreate
 * or the service refused after its check) takes one off the address's texts and none off its
 * countries, so two new-country texts and a give-back once looked like one text, and a check that
 * read 2 countries counted while the address had texted 4: one after another it is refused
 * (address_countries), in the burst it was sent (a fifth country). The count now counts the
 * address's countries again, its counter locked, against the most its answer holds.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { postgresUnavailable } from '../support/postgres.ts';
import { gatedStore, guardCheck, verdictNow, type Gated } from '../support/gated-pumping-store.ts';

const HOUR = 3_600_000;
const H = 480_123;
const WHEN = { hour: H, now: H * HOUR + 10 * 60_000 };
const ADDRESS = '203.0.113.77';
const T = DEFAULT_THRESHOLDS; // addressCountries 3

const start = (phone: string, user: string) => startKeys(phone, ADDRESS, user);

let g: Gated;
beforeAll(async () => {
  if (postgresUnavailable !== undefined) return;
  g = await gatedStore();
});
afterAll(async () => {
  await g?.close();
});

it.skipIf(postgresUnavailable !== undefined)(
  'a check counting on a reading of 2 countries after 2 new-country texts and 1 give-back is refused as one after another is',
  async () => {
    const gb1 = start('+447400123456', 'seed-gb-1');
    const fr = start('+33612345678', 'seed-fr');
    const gb2 = start('+447400987654', 'seed-gb-2'); // counted, then given back
    const victim = start('+4915112345678', 'victim-de');
    const w1 = start('+2348031234567', 'w1-ng');
    const w2 = start('+254712345678', 'w2-ke');
    expect([gb1, fr, gb2, victim, w1, w2].map((s) => s.country)).toEqual(['GB', 'FR', 'GB', 'DE', 'NG', 'KE']);

    // The address texted GB, FR (and GB again: a start whose text will be given back), none verified.
    for (const s of [gb1, fr, gb2]) {
      const c = guardCheck(g.pumping, s, T, WHEN);
      await c.done;
      expect(c.last()?.count).toBe('text');
    }

    // The victim reads: 2 countries unverified, clean; its address headroom is 1.
    const hold = g.hold('victim-de');
    const v = guardCheck(g.pumping, victim, T, WHEN);
    await v.firstDecision;
    expect(v.verdicts[0]?.reasons).toEqual([]);
    expect(v.last()).toMatchObject({ count: 'text' });
    const countriesHeadroom = (v.last() as { headroom: { countries: number } }).headroom.countries;
    expect(countriesHeadroom).toBe(1);

    // Meanwhile: two starts from the address to new countries (each clean on its reading), and the
    // GB start's give-back.
    for (const s of [w1, w2]) {
      const c = guardCheck(g.pumping, s, T, WHEN);
      await c.done;
      expect(c.last()?.count, `${s.country} on its own reading`).toBe('text');
    }
    await g.pumping.releaseSend({ keys: gb2.keys, hour: H });

    // The serialised check, judged on the counts as they are at its count: 4 countries, refused.
    const serial = await verdictNow(g.pumping, victim, T, WHEN);
    expect(serial.reasons).toContain('address_countries');

    hold.go();
    await v.done;
    expect(
      v.last()?.count,
      `the victim's count (it decided ${v.answers.length} time(s): ${JSON.stringify(v.verdicts)})`,
    ).toBe('refusal');
  },
  30_000,
);

it.skipIf(postgresUnavailable !== undefined)(
  "a check counting after two new-country texts and two give-backs (the address's texts as read) is refused as one after another is",
  async () => {
    const when = { hour: H + 5, now: (H + 5) * HOUR + 10 * 60_000 };
    const at = (phone: string, user: string) => startKeys(phone, '203.0.113.88', user);
    const gb1 = at('+447400123456', 'b-seed-gb-1');
    const fr = at('+33612345678', 'b-seed-fr');
    const back1 = at('+447400987654', 'b-back-1'); // counted, then given back
    const back2 = at('+33612345679', 'b-back-2'); // counted, then given back
    const victim = at('+4915112345678', 'b-victim-de');
    const w1 = at('+2348031234567', 'b-w1-ng');
    const w2 = at('+254712345678', 'b-w2-ke');
    // GB and FR three hours before (out of the address's hourly window), the two given back this hour.
    const earlier = { hour: when.hour - 3, now: (when.hour - 3) * HOUR + 10 * 60_000 };
    for (const s of [gb1, fr, back1, back2]) {
      const c = guardCheck(g.pumping, s, T, s === gb1 || s === fr ? earlier : when);
      await c.done;
      expect(c.last()?.count).toBe('text');
    }
    const hold = g.hold('b-victim-de');
    const v = guardCheck(g.pumping, victim, T, when);
    await v.firstDecision;
    expect(v.verdicts[0]?.reasons).toEqual([]);
    for (const s of [w1, w2]) {
      const c = guardCheck(g.pumping, s, T, when);
      await c.done;
      expect(c.last()?.count).toBe('text');
    }
    await g.pumping.releaseSend({ keys: back1.keys, hour: when.hour });
    await g.pumping.releaseSend({ keys: back2.keys, hour: when.hour });
    expect((await verdictNow(g.pumping, victim, T, when)).reasons).toContain('address_countries');
    hold.go();
    await v.done;
    expect(v.last()?.count, `the victim decided ${v.answers.length} time(s)`).toBe('refusal');
  },
  30_000,
);
