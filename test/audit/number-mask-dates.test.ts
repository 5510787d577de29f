/**
 * A date or a lifetime of seven digits or more quoted in what the audit says (`2026-11-30`,
 * `max-age=31536000`) stays masked: the audit does not know the country your app reads numbers
 * in, and in some the kit reads each as a number a user typed (Denmark's +45 2026 1130, +45 3153
 * 6000). None of the audit's own lines holds such a run: only text of your app it quotes.
 */
import { describe, expect, it } from 'vitest';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';

describe('dates and lifetimes in what the audit says', () => {
  it('masks them, as the kit reads each as a number of some country', () => {
    for (const [said, run] of [
      ['expires 2026-11-30', '2026-11-30'],
      ['Cache-Control: public, max-age=31536000', '31536000'],
      ['on 2026.11.30', '2026.11.30'],
    ] as const) {
      expect(readEnteredNumber(run, 'DK'), run).toBeDefined();
      expect(maskEveryNumber(said), said).toBe(said.replace(run, `[a number ending ${run.slice(-2)}]`));
    }
  });
});
