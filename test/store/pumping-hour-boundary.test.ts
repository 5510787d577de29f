/**
 * On PostgreSQL a check that read in the hour before (its start began a moment before the hour
 * turned, or its instance's clock is a little behind) counts its text in that hour's counters,
 * which a check reading in the new hour has in its last 24 hours. The count compared only the
 * counters of the hour it reads in, so the later check counted on a reading without that text.
 * Here a block has 5 unverified texts (its daily threshold is 6, none in the last two hours): B
 * reads at 59:59.999 of hour H-1, A at 00:01 of hour H, B counts, then A counts. Judged on the
 * counts at A's count (B's text included), A is refused (block_daily), as it now is.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { postgresUnavailable } from '../support/postgres.ts';
import { gatedStore, guardCheck, verdictNow, type Gated } from '../support/gated-pumping-store.ts';

const HOUR = 3_600_000;
const H = 480_321;
const T = DEFAULT_THRESHOLDS; // block: dailyFloor 6

let g: Gated;
beforeAll(async () => {
  if (postgresUnavailable !== undefined) return;
  g = await gatedStore();
});
afterAll(async () => {
  await g?.close();
});

it.skipIf(postgresUnavailable !== undefined)(
  'a check reading in the new hour is judged on a text counted in the hour before after its reading',
  async () => {
    const n = (i: number) => `+447400123${String(i).padStart(3, '0')}`;
    const startOf = (i: number) => startKeys(n(i), `198.51.100.${i}`, `user-${i}`);
    // 5 texts to the block earlier today (hours H-11, H-9, ..., H-3), one per address and user.
    for (let i = 1; i <= 5; i++) {
      const hour = H - 13 + 2 * i;
      const c = guardCheck(g.pumping, startOf(i), T, { hour, now: hour * HOUR + 60_000 });
      await c.done;
      expect(c.last()?.count).toBe('text');
    }
    const b = startOf(6);
    const a = startOf(7);
    expect(new Set([b.block, a.block, startOf(1).block]).size).toBe(1);

    const holdB = g.hold('user-6');
    const B = guardCheck(g.pumping, b, T, { hour: H - 1, now: H * HOUR - 1 });
    await B.firstDecision;
    const holdA = g.hold('user-7');
    const whenA = { hour: H, now: H * HOUR + 1_000 };
    const A = guardCheck(g.pumping, a, T, whenA);
    await A.firstDecision;
    expect(B.verdicts[0]?.reasons).toEqual([]);
    expect(A.verdicts[0]?.reasons).toEqual([]);

    holdB.go();
    await B.done;
    expect(B.last()?.count).toBe('text');

    const serial = await verdictNow(g.pumping, a, T, whenA);
    expect(serial.reasons).toContain('block_daily');

    holdA.go();
    await A.done;
    expect(A.last()?.count, `A decided ${A.answers.length} time(s): ${JSON.stringify(A.verdicts)}`).toBe('refusal');
  },
  30_000,
);
