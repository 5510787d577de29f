/**
 * The `pumping` option refuses what it would otherwise ignore, naming the fix, as the kit's other
 * option groups do: a misspelt key (an allow-list under `country` allowed no country, so its
 * users were refused in refuse mode; a misspelt threshold kept the default) and a kind of
 * thresholds that is not an object. The kit is not created with them.
 */
import { afterAll, expect, it } from 'vitest';
import { createVerificationKit, isKitError, KitErrorCode, type PumpingOptions } from '../../middleware/index.ts';
import { resolvePumping } from '../../middleware/pumping/pumping-options.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { VerifyStore } from '../../middleware/store/types.ts';

const store = createSqliteStore({ database: ':memory:' });
afterAll(async () => {
  await store.close();
});

const problems = (pumping: unknown) => resolvePumping(pumping).problems;

it('reports an allow-listed country no number belongs to (UK for GB): it would allow nothing', () => {
  expect(problems({ alwaysAllow: { countries: ['UK'] } })).toEqual([
    "`pumping.alwaysAllow.countries` must be a list of countries, e.g. ['GB', 'FR'].",
  ]);
  expect(problems({ alwaysAllow: { countries: ['XX', 'GB'] } })).toHaveLength(1);
  expect(problems({ alwaysAllow: { countries: ['GB', 'ZZ'] } })).toEqual([]);
});

// The kit's options check every group's keys with one function (options/option-problems.ts checkKnownKeys).
const keyProblem = (pumping: unknown) => (kitError(pumping as PumpingOptions) as Error | undefined)?.message;

it('reports a key that is no option, at every level, with the name it likely meant, as every option group does', () => {
  const cases: [unknown, string][] = [
    [{ mdoe: 'refuse' }, '`pumping.mdoe` is not an option: did you mean `mode`?'],
    [
      { alwaysAllow: { adresses: ['203.0.113.0/24'] } },
      '`pumping.alwaysAllow.adresses` is not an option: did you mean `addresses`?',
    ],
    [
      { thresholds: { Block: { dailyFloor: 50 } } },
      '`pumping.thresholds.Block` is not an option: did you mean `block`?',
    ],
    [
      { thresholds: { block: { dailyfloor: 50 } } },
      '`pumping.thresholds.block.dailyfloor` is not an option: did you mean `dailyFloor`?',
    ],
  ];
  for (const [pumping, problem] of cases) expect(keyProblem(pumping)).toBe(`createVerificationKit: ${problem}`);
});

it('reports a key like no option with the ones that are, and a key with a control character quoted', () => {
  const cases: [unknown, string][] = [
    [
      { mode: 'refuse', allowList: { countries: ['GB'] } },
      '`pumping.allowList` is not an option; use mode, alwaysAllow, thresholds, challenge.',
    ],
    [
      { alwaysAllow: { country: ['GB'] } },
      '`pumping.alwaysAllow.country` is not an option; use countries, numberPrefixes, addresses, users.',
    ],
    [
      { thresholds: { countries: { dailyFloor: 50 } } },
      '`pumping.thresholds.countries` is not an option; use country, block, address, addressCountries.',
    ],
    [
      { alwaysAllow: { 'ip\nranges': [] } },
      '`pumping.alwaysAllow."ip\\nranges"` is not an option; use countries, numberPrefixes, addresses, users.',
    ],
  ];
  for (const [pumping, problem] of cases) expect(keyProblem(pumping)).toBe(`createVerificationKit: ${problem}`);
});

it('reports a kind of thresholds that is not an object', () => {
  expect(problems({ thresholds: { country: 50 } })).toEqual([
    '`pumping.thresholds.country` must be { dailyFloor, hourlyFloor, unverifiedPerVerified }, or omitted.',
  ]);
});

it('takes every option it documents without a problem', () => {
  const all: PumpingOptions = {
    mode: 'refuse',
    alwaysAllow: { countries: ['GB'], numberPrefixes: ['+44790'], addresses: ['203.0.113.0/24'], users: ['s-1'] },
    thresholds: {
      country: { dailyFloor: 30, hourlyFloor: 4, unverifiedPerVerified: 0.4 },
      block: { dailyFloor: 8 },
      address: { hourlyFloor: 6 },
      addressCountries: 4,
    },
    challenge: { verify: () => true },
  };
  expect(problems(all)).toEqual([]);
  expect(resolvePumping(all).resolved.thresholds.block).toEqual({
    dailyFloor: 8,
    hourlyFloor: 3,
    unverifiedPerVerified: 0.5,
  });
});

function kitError(pumping: PumpingOptions | undefined, kitStore: VerifyStore<unknown> = store): unknown {
  try {
    createVerificationKit({
      baseUrl: 'http://127.0.0.1:9',
      clientId: 'client-1',
      clientSecret: 'top-secret-value-9f8e7d',
      returnUrl: 'http://localhost:3000/verify/return',
      store: kitStore,
      actions: [{ name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {} }],
      resolveUser: () => null,
      ...(pumping === undefined ? {} : { pumping }),
    });
  } catch (error) {
    return error;
  }
  return undefined;
}

it("a store without the counters: a mode asked for by name is refused, naming 'off'; the default and 'off' are taken", () => {
  const withoutCounters: VerifyStore<unknown> = { ...store, pumping: undefined };
  for (const mode of ['refuse', 'record'] as const) {
    const error = kitError({ mode }, withoutCounters);
    expect(isKitError(error, KitErrorCode.InvalidOptions), mode).toBe(true);
    expect((error as Error).message).toContain(
      `\`pumping.mode: '${mode}'\` needs a store that keeps the SMS pumping counters`,
    );
    expect((error as Error).message).toContain("set `pumping: { mode: 'off' }`");
  }
  expect(kitError(undefined, withoutCounters)).toBeUndefined();
  expect(kitError({ mode: 'off' }, withoutCounters)).toBeUndefined();
  expect(kitError({ mode: 'refuse' })).toBeUndefined();
});

it('the kit is not created with a misspelt allow-list', () => {
  const error = kitError({ mode: 'refuse', alwaysAllow: { country: ['GB'] } } as PumpingOptions);
  expect(isKitError(error, KitErrorCode.InvalidOptions)).toBe(true);
  expect((error as Error).message).toContain(
    '`pumping.alwaysAllow.country` is not an option; use countries, numberPrefixes, addresses, users.',
  );
});

it('refuses an address range whose prefix is not digits (a trailing slash read as /0 allowed every address)', () => {
  for (const range of ['203.0.113.7/', '203.0.113.0/ 24', '203.0.113.0/0x18', '2001:db8::/', '203.0.113.0/24/8']) {
    expect(problems({ alwaysAllow: { addresses: [range] } }), range).toEqual([
      "`pumping.alwaysAllow.addresses` must be a list of addresses, e.g. ['203.0.113.0/24', '2001:db8::/32'].",
    ]);
  }
  const { allows } = resolvePumping({ alwaysAllow: { addresses: ['203.0.113.0/24', '2001:db8::/32'] } }).resolved;
  const start = { country: 'NG', e164: '+2348031000001', userRef: 'u' };
  expect(allows({ ...start, ip: '203.0.113.9' })).toBe(true);
  expect(allows({ ...start, ip: '::ffff:203.0.113.9' })).toBe(true);
  expect(allows({ ...start, ip: '2001:db8:5::1' })).toBe(true);
  expect(allows({ ...start, ip: '198.51.100.1' })).toBe(false);
});

it('allows a listed client however its address arrives, as the rules count it: with a port, a zone, or IPv6 spelling IPv4', () => {
  const { allows } = resolvePumping({ alwaysAllow: { addresses: ['203.0.113.0/24', '2001:db8::/32'] } }).resolved;
  const start = { country: 'NG', e164: '+2348031000001', userRef: 'u' };
  for (const ip of [
    '203.0.113.9:5555',
    '[::ffff:203.0.113.9]:443',
    '::ffff:cb00:7109',
    '::ffff:0:203.0.113.9',
    '::203.0.113.9',
    '[2001:db8:5::1]:443',
    '2001:db8:5::1%eth0',
  ]) {
    expect(allows({ ...start, ip }), ip).toBe(true);
  }
  for (const ip of ['198.51.100.1:203', '[::ffff:198.51.100.1]:80', 'unknown', '203.0.113.9:99999']) {
    expect(allows({ ...start, ip }), ip).toBe(false);
  }
});
