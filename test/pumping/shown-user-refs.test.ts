/**
 * kit.pumping shows operators a userRef that is or holds a phone number masked (so do the demo's
 * operator page and `fraud decisions` / `fraud rules`, built on it): one that holds the number
 * glued to a word or an address, as apps key users by a WhatsApp id, a SIP URI or a prefixed id,
 * or written in groups (`user_07700-900123`, `user_07700_900123`, commas, and every mark the kit
 * reads between a typed number's digits: dashes of any width, a tilde, a zero-width space), or in
 * full-width digits, is masked too, in decisions(), rules() and what block() answers; a UUID is
 * shown whole.
 */
import { afterAll, expect, it } from 'vitest';
import { OPERATIONS_NOW, operationsInMemory } from '../support/pumping-operations.ts';

const { ops, store } = operationsInMemory();
afterAll(() => store.close());

/** [userRef, the number's digits that must never be shown in a row]. */
const HELD: [string, string][] = [
  ['447700900456@s.whatsapp.net', '7700900456'],
  ['sip:+447700900456@carrier.example', '7700900456'],
  ['+447700900456@sms', '7700900456'],
  ['user_447700900456', '7700900456'],
  ['sms-+447700900456', '7700900456'],
  // Written in groups, glued to a word or not.
  ['user_07700-900123', '07700900123'],
  ['tel_+1-555-010-0001', '15550100001'],
  ['id-44-7700-900123', '447700900123'],
  ['u.07700.900.123', '07700900123'],
  ['wa07700 900123', '07700900123'],
  // Grouped with underscores (snake_case ids) or commas.
  ['user_07700_900123', '07700900123'],
  ['wa_44_7700_900123', '447700900123'],
  ['tel:+44,7700,900,123', '447700900123'],
  // By the marks the kit reads between a typed number's groups: an en dash (as a word processor
  // types one), a full-width hyphen and full-width digits (as Chinese and Japanese keyboards type
  // them), a tilde, a zero-width space (as a copied number carries one).
  ['user_07700\u2013900123', '07700900123'],
  ['user_07700\uff0d900123', '07700900123'],
  ['user_\uff10\uff17\uff17\uff10\uff10\uff0d\uff19\uff10\uff10\uff11\uff12\uff13', '07700900123'],
  ['user_07700~900123', '07700900123'],
  ['user_07700\u200b900123', '07700900123'],
];

/** A text's digits in a row, full-width digits read as ASCII (NFKC), every other character dropped. */
function digitsOf(text: string): string {
  return text.normalize('NFKC').replace(/\D/g, '');
}

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
    // The newest decision (this one), the user's rule as listed, and as block() answered it.
    const [decision] = await ops.decisions({ limit: 1 });
    const rule = (await ops.rules()).find((r) => r.dimension === 'user');
    await ops.clear({ user: userRef });
    for (const shown of [decision?.userRef, rule?.key, blocked.key]) {
      // Its digits in a row once every other character is dropped: no group mark hides them.
      expect(digitsOf(String(shown)), `shown as ${JSON.stringify(shown)}`).not.toContain(digits);
    }
  },
);

it('shows a UUID whole, though its last group may be twelve digits', async () => {
  const uuid = '550e8400-e29b-41d4-a716-446655440000';
  expect(await ops.block({ user: uuid }, 1)).toMatchObject({ key: uuid });
  await ops.clear({ user: uuid });
});
