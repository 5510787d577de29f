/**
 * The kit spares a whole IPv4 address (four parts of 0 to 255, a prefix of at most 32) among the
 * values it masks, and nothing else grouped like one: three dotted groups ("251.23.45") or a
 * prefix past 32 is a number's grouping the kit reads, so a confirmation page's path and a message
 * show it masked, as the audit's report does. An address with a port (a URL's host) is spared too.
 */
import { describe, expect, it } from 'vitest';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { maskNumbersInPath, NOT_REPEATED, quotedUnlessNumber } from '../../middleware/numbers/mask-number.ts';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';
import { confirmPageFor } from '../support/confirm-page.ts';
import { createVerificationKit } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

/** Grouped as an address is, but none: each a number the kit reads in that country. */
const NUMBERS_GROUPED_AS_ADDRESSES = [
  ['251.23.45', 'DE'],
  ['203.0.113', 'DE'],
  ['12.34.56.78/901', 'CA'],
  ['12.34.56.78/33', 'GB'],
] as const;

const WHOLE_ADDRESSES = ['203.0.113.7', '127.213.0.0/16', '198.18.255.254/32', '10.0.0.0/0'];

/** An app's address with its port, as a URL's host holds it: no number the kit reads has a colon. */
const ADDRESSES_WITH_PORTS = ['0.0.0.0:43159', '10.20.30.40:5060', '192.168.100.200:65535', '12.34.56.78:901'];

describe('values grouped as an IPv4 address is, in what the kit shows', () => {
  it('masks in a confirmation page a path part that is no address, which the kit reads as a number', () => {
    // One grouped by a slash too: its parts are read together.
    for (const [number, country] of NUMBERS_GROUPED_AS_ADDRESSES) {
      expect(readEnteredNumber(number, country), number).toBeDefined();
      const path = `/accounts/${number}/close`;
      expect(maskNumbersInPath(path)).toBe(`/accounts/••\u00a0${number.slice(-2)}/close`);
      // The whole page, its form included: it posts back to the page's own address.
      expect(confirmPageFor(path), number).not.toContain(number);
    }
  });

  it('does not repeat such a value in a message, with a prefix past 32 too', () => {
    for (const [number, country] of NUMBERS_GROUPED_AS_ADDRESSES) {
      expect(readEnteredNumber(number, country), number).toBeDefined();
      expect(quotedUnlessNumber(number), number).toBe(NOT_REPEATED);
    }
  });

  it('leaves a whole IPv4 address as written, with a prefix of an address', () => {
    for (const address of WHOLE_ADDRESSES) {
      expect(maskNumbersInPath(`/hosts/${address}`)).toBe(`/hosts/${address}`);
      expect(quotedUnlessNumber(address)).toBe(JSON.stringify(address));
    }
  });

  it('leaves an IPv4 address with its port as written: an options error quotes the returnUrl whole', async () => {
    for (const value of ADDRESSES_WITH_PORTS) {
      for (const country of ['GB', 'CA', 'DE', 'US', 'FR'] as const) {
        expect(readEnteredNumber(value, country), `${value} in ${country}`).toBeUndefined();
      }
      expect(maskNumbersInPath(`http://${value}/verify/return`)).toBe(`http://${value}/verify/return`);
      expect(quotedUnlessNumber(value)).toBe(JSON.stringify(value));
    }
    const store = createSqliteStore({ database: ':memory:' });
    const returnUrl = 'http://0.0.0.0:43159/verify/return';
    try {
      expect(() =>
        createVerificationKit({
          baseUrl: 'http://127.0.0.1:9',
          clientId: 'client-1',
          clientSecret: 'top-secret-value-9f8e7d',
          returnUrl,
          store,
          actions: [{ name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {} }],
          resolveUser: () => null,
        }),
      ).toThrow(`got "${returnUrl}"`);
    } finally {
      await store.close();
    }
  });

  it('spares exactly what the audit spares', () => {
    for (const value of [
      ...NUMBERS_GROUPED_AS_ADDRESSES.map(([number]) => number),
      ...WHOLE_ADDRESSES,
      ...ADDRESSES_WITH_PORTS,
    ]) {
      const kitSpares = quotedUnlessNumber(value) !== NOT_REPEATED;
      const auditSpares = maskEveryNumber(value) === value;
      expect(kitSpares, value).toBe(auditSpares);
    }
  });
});
