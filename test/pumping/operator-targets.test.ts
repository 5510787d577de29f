/**
 * An operator's target (`kit.pumping.block/release`, the `fraud` command) that could never match a
 * start is refused, naming the fix, and nothing is written, on SQLite and PostgreSQL: a whole
 * number given as a block (a rule no start matches, the number kept), and an IPv4 address with a
 * /64 (only IPv6 has one). A block of a country whose numbers vary in length, and an IPv6 /64, are
 * kept as the counters key a start. Counts per day are read by country or block only, and for no
 * more days (nor decisions) than are kept.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEFAULT_HOOK_TIMEOUTS } from '../../middleware/deadline.ts';
import { pumpingOperations, type PumpingOperations } from '../../middleware/pumping/pumping-operations.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { optionsRefusal as refusal } from '../support/options-refusal.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const NOW = Date.UTC(2026, 0, 5, 10);

describeEachStore('operators’ targets', (kind) => {
  let h: StoreUnderTest;
  let ops: PumpingOperations;
  beforeEach(async () => {
    h = await kind.open();
    ops = pumpingOperations({
      store: h.store.pumping,
      thresholds: DEFAULT_THRESHOLDS,
      now: () => NOW,
      timeoutMs: DEFAULT_HOOK_TIMEOUTS.limits,
    });
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('refuses a whole number as a block, naming its block and not the number, and keeps nothing', async () => {
    const message = await refusal(ops.block({ block: '+33612345678' }));
    expect(message).toContain('"+33612345"');
    expect(message).not.toContain('33612345678');
    expect(await refusal(ops.release({ block: '+14155550123' }))).toContain('"+14155550"');
    expect(await ops.rules()).toEqual([]);
  });

  it('never quotes a whole number given as a block, however it is spelt or whatever range it is of, and keeps nothing', async () => {
    const given = [
      ['+33 6 12 34 56 78', '612345678'],
      ['0033612345678', '33612345678'],
      ['+33-6-12-34-56-78', '33612345678'],
      // A fiction range the metadata holds no type for, and a test number too long for any range.
      ['+447700900123', '447700900123'],
      ['+155501000012345', '55501000012345'],
    ] as const;
    for (const [block, digits] of given) {
      const message = await refusal(ops.block({ block }));
      expect(message).not.toContain(block);
      expect(message.replace(/\D/g, ''), message).not.toContain(digits);
    }
    expect(await refusal(ops.release({ block: '+447700900123' }))).toContain('"+447700900"');
    expect(await ops.rules()).toEqual([]);
  });

  it('refuses a country no number belongs to (UK for GB, XX), naming the fix, and keeps nothing; ZZ is kept', async () => {
    expect(await refusal(ops.block({ country: 'UK' }))).toContain("'GB'");
    expect(await refusal(ops.release({ country: 'XX' }))).toContain('"XX"');
    expect(await ops.rules()).toEqual([]);
    // What the counters key a number no country's ranges hold: an operator may block it.
    const rule = await ops.block({ country: 'ZZ' });
    expect(rule.key).toBe(startKeys('+8821234567', '192.0.2.1', 'u').country);
  });

  it('never repeats a phone number given as a country or an address, however it is spelt, and keeps nothing', async () => {
    const digitsOf = (text: string) => text.replace(/\P{Nd}/gu, '');
    const spellings = [
      '+447400123456',
      '07400 123456',
      '+33 6 12 34 56 78',
      '06.12.34.56.78',
      '００３３６１２３４５６７８',
      // Grouped by dots as an address is (Swiss, Spanish), with a part no address has.
      '079.123.45.67',
      '612.345.678',
      // Grouped as an address's start (German) or with a prefix no address has (British).
      '251.23.45',
      '12.34.56.78/33',
      // Grouped by colons as an IPv6 address is, but too few groups to be one.
      '0740:0123:456',
      '[0740:0123:456]:80',
    ];
    for (const value of spellings) {
      for (const target of [{ country: value }, { address: value }]) {
        const message = await refusal(ops.block(target));
        expect(message).toMatch(/^(country|address) must be/);
        expect(digitsOf(message), message).not.toContain(digitsOf(value));
        expect(message).toContain('not repeated here');
      }
    }
    // An address's start is a number the kit reads (203.0.113 in Germany): not repeated either.
    expect(await refusal(ops.block({ address: '203.0.113' }))).toContain('not repeated here');
    // A value that cannot be a number is named back, so the operator sees the mistake.
    expect(await refusal(ops.block({ address: '2001:db8::1/129' }))).toContain('got "2001:db8::1/129"');
    expect(await refusal(ops.block({ address: '[::ffff:203.0.113.7]:99999' }))).toContain(
      'got "[::ffff:203.0.113.7]:99999"',
    );
    expect(await ops.rules()).toEqual([]);
  });

  it('refuses a block too short or too long to be any number of its country without its last three digits, and keeps nothing', async () => {
    // French numbers have 9 digits after +33: a block has 6.
    expect(await refusal(ops.block({ block: '+336123' }))).toContain('too short');
    expect(await refusal(ops.release({ block: '+3361234567' }))).toContain('too long');
    expect(await ops.rules()).toEqual([]);
    // A country code no country has: numbers of no country (ZZ) are counted by block too.
    expect((await ops.block({ block: '+99912345' })).key).toBe(startKeys('+99912345678', '192.0.2.1', 'u').block);
  });

  it('refuses a block of a calling code no country has with more digits than any block holds (15 less 3), not quoting it, and keeps nothing', async () => {
    // No lengths to judge such a code by: E.164's 15 digits still bound its numbers, so its blocks have 12 at most.
    for (const block of ['+9991234567890', '+99912345678901']) {
      const message = await refusal(ops.block({ block }));
      expect(message).toContain('too long');
      expect(message.replace(/\D/g, ''), message).not.toContain(block.slice(1));
    }
    expect(await ops.rules()).toEqual([]);
    // Its longest block is kept: the one a number of 15 digits is counted by.
    expect((await ops.block({ block: '+999123456789' })).key).toBe(
      startKeys('+999123456789012', '192.0.2.1', 'u').block,
    );
  });

  it('keeps a block that is a start of numbers, in a country whose numbers vary in length too', async () => {
    await ops.block({ block: '+33612345' });
    await ops.block({ block: '+4930123456' });
    const kept = (await ops.rules()).map((r) => r.key).sort();
    expect(kept).toEqual(['+33612345', '+4930123456']);
    expect(startKeys('+4930123456789', '192.0.2.1', 'u').block).toBe('+4930123456');
  });

  it('refuses an IPv4 address with a /64 and keeps nothing; an IPv6 /64 is the key a start from it has', async () => {
    // Named by the example the message gives; the value itself (digits the kit may read as a number) is not repeated.
    expect(await refusal(ops.block({ address: '203.0.113.7/64' }))).toMatch(
      /such as '203\.0\.113\.7' .*; got a value not repeated here, as it may be a phone number\.$/,
    );
    expect(await ops.rules()).toEqual([]);
    const rule = await ops.block({ address: '2001:db8:1:2::/64' });
    expect(rule.key).toBe(startKeys('+33612345678', '2001:db8:1:2::99', 'u').address);
  });

  it('refuses a user holding a NUL character as invalid_options on every store, and keeps nothing', async () => {
    // An admin page's field with "%00" in it: PostgreSQL cannot keep it, SQLite kept a rule no start matched.
    for (const act of [ops.block({ user: 'user-alice\0' }), ops.release({ user: '\0' }), ops.clear({ user: 'a\0b' })]) {
      expect(await refusal(act)).toContain('user must be a userRef as resolveUser returns it, with no NUL character');
    }
    expect(await ops.rules()).toEqual([]);
    expect((await ops.block({ user: 'user-alice' })).key).toBe('user-alice');
  });

  it('refuses counts per day by anything but country or block, naming the two', async () => {
    await h.store.pumping!.recordSend({
      sessionId: 's',
      keys: [{ dimension: 'user', key: 'u1' }],
      hour: NOW / 3_600_000,
    });
    for (const by of ['user', 'address_country', 'Country']) {
      const message = await refusal(ops.countsByDay({ by: by as 'country' }));
      expect(message).toContain("by must be 'country' or 'block'");
    }
    expect(await ops.countsByDay({ by: 'block' })).toEqual([]);
  });

  it('never repeats a phone number given as what counts per day are by, and refuses any value as invalid_options', async () => {
    for (const by of ['+447400123456', '07400 123456', '００３３６１２３４５６７８']) {
      const message = await refusal(ops.countsByDay({ by: by as 'country' }));
      expect(message).toMatch(/^by must be 'country' or 'block'; got a value not repeated here/);
      expect(message.replace(/\P{Nd}/gu, ''), message).not.toContain(by.replace(/\P{Nd}/gu, ''));
    }
    // Values JSON cannot write (a BigInt, an object holding itself) are refused as any other.
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(await refusal(ops.countsByDay({ by: 447400123456n as unknown as 'country' }))).toContain('type bigint');
    expect(await refusal(ops.countsByDay({ by: circular as unknown as 'country' }))).toContain('type object');
    // A value that cannot be a number is named back, so the operator sees the mistake.
    expect(await refusal(ops.countsByDay({ by: 'Country' as 'country' }))).toContain('got "Country"');
  });

  it('refuses days or a limit past what is kept, naming the most, rather than answering less than asked', async () => {
    // An admin page labelled "the last 30 days" must not show 15 without saying so.
    expect(await refusal(ops.countsByDay({ by: 'country', days: 16 }))).toContain('days must be a number from 1 to 15');
    expect(await refusal(ops.decisions({ hours: 24, limit: 10_001 }))).toContain(
      'limit must be a number from 1 to 10000',
    );
    expect(await ops.countsByDay({ by: 'country', days: 15 })).toEqual([]);
    expect(await ops.decisions({ hours: 24, limit: 10_000 })).toEqual([]);
  });

  it('never repeats a phone number given as hours, days or a limit (a form field pasted into), and keeps nothing', async () => {
    const digits = '447400123456';
    const given = [
      ops.block({ country: 'NG' }, Number(digits)),
      ops.release({ country: 'NG' }, `+${digits}` as unknown as number),
      ops.decisions({ hours: Number(digits) }),
      ops.decisions({ hours: 24, limit: Number(digits) }),
      ops.countsByDay({ by: 'country', days: `+44 7400 123456` as unknown as number }),
    ];
    for (const refused of given) {
      const message = await refusal(refused);
      expect(message).toMatch(/^(hours|days|limit) must be/);
      expect(message.replace(/\D/g, ''), message).not.toContain(digits);
    }
    // A value that cannot be a number is named back, so the operator sees the mistake.
    expect(await refusal(ops.decisions({ hours: 24, limit: 10_001 }))).toContain('got 10001');
    expect(await ops.rules()).toEqual([]);
  });
});
