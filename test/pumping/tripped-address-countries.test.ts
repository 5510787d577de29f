/**
 * `kit.pumping.tripped()` (`fraud tripped`) lists an address whose starts the `address_countries`
 * rule refuses: one that texted more countries than `addressCountries` without a verification from
 * it, though too few texts for its hourly or daily rule. Every start from it is refused, so an
 * operator must see it, as the check before a text finds it. On SQLite and PostgreSQL.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { judge } from '../../middleware/pumping/pumping-decision.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { pumpingOperations } from '../../middleware/pumping/pumping-operations.ts';
import { DEFAULT_THRESHOLDS, hourOf } from '../../middleware/pumping/pumping-rules.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const NOW = Date.UTC(2026, 0, 5, 10, 30);
const HOUR = hourOf(NOW);
/** Mobiles of four countries, one text each from the attacking address, none verified. */
const TEXTED = ['+2348031000001', '+923001234567', '+233241234567', '+254712345678'];
const ATTACKER = '192.0.2.7';
/** Three countries from this one: at the rule's threshold, not past it. */
const QUIET = '192.0.2.8';

describeEachStore('tripped() and the address_countries rule', (kind) => {
  let h: StoreUnderTest;
  let pumping: PumpingStore;
  beforeEach(async () => {
    h = await kind.open();
    pumping = h.store.pumping!;
  });
  afterEach(async () => {
    await h.dispose();
  });

  const send = async (number: string, address: string, n: number) => {
    const { keys } = startKeys(number, address, `user-${address}-${n}`);
    await pumping.recordSend({ sessionId: `s-${address}-${n}`, keys, hour: HOUR });
  };

  it('lists an address the rule refuses, with the reason, and not one at the threshold', async () => {
    for (const [n, number] of TEXTED.entries()) await send(number, ATTACKER, n);
    for (const [n, number] of TEXTED.slice(0, 3).entries()) await send(number, QUIET, n);

    // The check before a text refuses the attacker's next start by this rule alone.
    const next = startKeys('+2348059000001', ATTACKER, 'user-next');
    const reading = await pumping.readPumping({ keys: next.keys, address: next.address, hour: HOUR, now: NOW });
    expect(judge(reading, next, DEFAULT_THRESHOLDS, NOW).reasons).toEqual(['address_countries']);

    const ops = pumpingOperations({ store: pumping, thresholds: DEFAULT_THRESHOLDS, now: () => NOW, timeoutMs: 5000 });
    const addresses = (await ops.tripped()).filter((t) => t.dimension === 'address');
    expect(addresses.map((t) => [t.key, t.reasons])).toEqual([[ATTACKER, ['address_countries']]]);
  });
});
