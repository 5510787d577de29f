/**
 * An operator's country must be one the counters key a start by: 'EH' (Western Sahara) is refused,
 * as 'UK' is, and nothing is written, since libphonenumber reads every +212 number, Western
 * Sahara's 528[89] ranges included, as 'MA' (before, the block was written and said to be in force
 * while no start read it). alwaysAllow.countries refuses it too.
 */
import { afterAll, expect, it } from 'vitest';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { resolvePumping } from '../../middleware/pumping/pumping-options.ts';
import { operationsInMemory } from '../support/pumping-operations.ts';

const { ops, store } = operationsInMemory();
afterAll(() => store.close());

// Why 'EH' is refused: should the metadata ever read a number as 'EH', this fails first.
it("a Western Sahara number (+212 5288…) is counted under 'MA', never 'EH'", () => {
  expect(startKeys('+212528812345', '192.0.2.1', 'u').country).toBe('MA');
  expect(startKeys('+212528912345', '192.0.2.1', 'u').country).toBe('MA');
});

it("block({ country: 'EH' }) is refused, as 'UK' is, and nothing is written", async () => {
  const outcome = await ops.block({ country: 'EH' }, 1).then(
    (rule) => `written: ${JSON.stringify(rule)}`,
    (error: unknown) => `refused: ${(error as Error).message}`,
  );
  const rules = await ops.rules();
  expect(outcome).toMatch(/^refused/);
  expect(rules).toEqual([]);
});

it("alwaysAllow.countries refuses 'EH' as it refuses 'UK'", () => {
  expect(resolvePumping({ alwaysAllow: { countries: ['EH'] } }).problems).toHaveLength(1);
});
