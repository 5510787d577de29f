/**
 * An operator's block one digit too long or too short for its country ('+417812345': Swiss
 * numbers have 9 digits after +41, so a block keeps 6) is refused and nothing is written: each of
 * its numbers is counted under another block (the real number it starts with), so the rule would
 * never be read, yet it was written and said to be in force. The block its numbers are counted
 * under is accepted.
 */
import { afterAll, expect, it } from 'vitest';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { operationsInMemory } from '../support/pumping-operations.ts';

const { ops, store } = operationsInMemory();
afterAll(() => store.close());

/** Each block, one digit too long (or short), and the block its numbers are counted under. */
const TOO_LONG: [string, string][] = [
  ['+417812345', '+41781234'], // +41 78 123 45 67: Swiss mobiles have 9 digits after +41
  ['+614123456', '+61412345'], // +61 412 345 678
  ['+49151234567', '+4915123456'], // +49 1512 3456789
  // One digit too short: +57 321 1234567 (ten digits after +57); its numbers have nine, counted by their first five.
  ['+57321123', '+57321'],
];

it.each(TOO_LONG)(
  'block %s: refused, its numbers counted under %s, and nothing written',
  async (block, countedUnder) => {
    // Every number of the block, as a start counts it.
    const under = new Set<string>();
    for (let last = 0; last < 1000; last++) {
      under.add(startKeys(`${block}${String(last).padStart(3, '0')}`, '192.0.2.1', 'u').block);
    }
    expect([...under]).toEqual([countedUnder]);
    const refusal = await ops.block({ block }, 1).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refusal).toMatch(/no number of this one is counted under it.*but its last 3,/);
    expect(refusal).not.toContain(block.slice(1));
    expect(await ops.rules()).toEqual([]);
  },
);

// +57321 is no block of a Colombian number (too short): only the first three are.
it.each(TOO_LONG.slice(0, 3))(
  'the block its numbers are counted under is accepted (%s: %s)',
  async (_block, countedUnder) => {
    expect(await ops.block({ block: countedUnder }, 1)).toMatchObject({ key: countedUnder });
    await ops.clear({ block: countedUnder });
  },
);
