/**
 * kit.pumping (decisions(), rules(), block()), and so `fraud decisions --json`, `fraud rules` and
 * the demo's operator page, never show whole a phone number a userRef holds written in groups
 * (dashes, dots, a space) and glued to a word: every run of digits and group marks holding seven
 * digits or more is masked.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_HOOK_TIMEOUTS } from '../../middleware/deadline.ts';
import { pumpingOperations, type PumpingOperations } from '../../middleware/pumping/pumping-operations.ts';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

const NOW = Date.UTC(2026, 0, 5, 10);
const store = createSqliteStore({ database: ':memory:' });
let ops: PumpingOperations;

beforeAll(() => {
  ops = pumpingOperations({
    store: store.pumping,
    thresholds: DEFAULT_THRESHOLDS,
    mode: 'refuse',
    now: () => NOW,
    timeoutMs: DEFAULT_HOOK_TIMEOUTS.limits,
  });
});
afterAll(() => store.close());

/** [userRef, the number's digits that must never be shown in a row]. */
const HELD: [string, string][] = [
  ['user_07700-900123', '07700900123'],
  ['tel_+1-555-010-0001', '15550100001'],
  ['id-44-7700-900123', '447700900123'],
  ['u.07700.900.123', '07700900123'],
  ['wa07700 900123', '07700900123'],
];

it.each(HELD)('never shows the grouped number held by the userRef %j whole', async (userRef, digits) => {
  await store.pumping!.recordDecision({
    decidedAt: NOW,
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
    expect(String(shown).replace(/\D/g, '')).not.toContain(digits);
  }
});
