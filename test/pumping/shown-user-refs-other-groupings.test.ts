/**
 * kit.pumping (and so `fraud decisions --json`, `fraud rules`, the demo's operator page) never
 * shows a phone number a userRef holds whole, however the app's ids group its digits: with
 * underscores (snake_case ids, `user_07700_900123`) or commas too. Before, the digit runs were split
 * at each underscore or comma into runs shorter than a number, and none was masked.
 */
import { afterAll, expect, it } from 'vitest';
import { OPERATIONS_NOW, operationsInMemory } from '../support/pumping-operations.ts';

const { ops, store } = operationsInMemory();
afterAll(() => store.close());

const HELD: [string, string][] = [
  ['user_07700_900123', '07700900123'],
  ['wa_44_7700_900123', '447700900123'],
  ['tel:+44,7700,900,123', '447700900123'],
];

it.each(HELD)(
  'never shows the number held by the userRef %j whole (decisions, rules, block)',
  async (userRef, digits) => {
    await store.pumping!.recordDecision({
      decidedAt: OPERATIONS_NOW,
      decision: 'refused',
      reasons: ['country_hourly'],
      country: 'GB',
      block: '+447700900',
      address: '192.0.2.77',
      userRef,
    });
    const blocked = await ops.block({ user: userRef }, 1);
    const [decision] = await ops.decisions({ limit: 1 });
    const rule = (await ops.rules()).find((r) => r.dimension === 'user');
    await ops.clear({ user: userRef });
    for (const shown of [decision?.userRef, rule?.key, blocked.key]) {
      expect(String(shown).replace(/\D/g, ''), `shown as ${JSON.stringify(shown)}`).not.toContain(digits);
    }
  },
);
