/**
 * kit.pumping shows operators a userRef that is or holds a phone number masked (so do the demo's
 * operator page and `fraud decisions` / `fraud rules`, built on it): one that holds the number
 * glued to a word or an address, as apps key users by a WhatsApp id, a SIP URI or a prefixed id,
 * is masked too, in decisions(), rules() and what block() answers; a UUID is shown whole.
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

const HELD = [
  '447700900456@s.whatsapp.net',
  'sip:+447700900456@carrier.example',
  '+447700900456@sms',
  'user_447700900456',
  'sms-+447700900456',
];

it.each(HELD)('never shows the number held by the userRef %j whole (decisions, rules, block)', async (userRef) => {
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
  // The newest decision (this one), the user's rule as listed, and as block() answered it.
  const shown = JSON.stringify([await ops.decisions({ limit: 1 }), await ops.rules(), blocked]);
  await ops.clear({ user: userRef });
  expect(shown).not.toContain('7700900456');
});

it('shows a UUID whole, though its last group may be twelve digits', async () => {
  const uuid = '550e8400-e29b-41d4-a716-446655440000';
  expect(await ops.block({ user: uuid }, 1)).toMatchObject({ key: uuid });
  await ops.clear({ user: uuid });
});
