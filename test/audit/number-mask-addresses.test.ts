/**
 * What the audit reports spares an IPv4 address (four parts of 0 to 255, with a prefix of at most
 * 32) and nothing else grouped like one: three dotted groups ("251.23.45", the start of an
 * address), a part past 255 or a prefix past 32 is a number's grouping the kit reads, and masked.
 */
import { describe, expect, it } from 'vitest';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';

describe('numbers grouped as an IPv4 address is, in what the audit says', () => {
  it('masks a number in dotted groups that is no address, which the kit reads as a number', () => {
    for (const [said, country, ending] of [
      ['Account of 251.23.45', 'DE', '45'],
      ['Account of 203.0.113', 'DE', '13'],
      ['Account of 12.34.56.78/901', 'CA', '01'],
      ['Account of 470.12.34.56', 'AU', '56'],
    ] as const) {
      const number = said.slice('Account of '.length);
      // The kit reads it as a number of that country: a user there may type it so.
      expect(readEnteredNumber(number, country), number).toBeDefined();
      expect(maskEveryNumber(said), said).toBe(`Account of [a number ending ${ending}]`);
    }
  });

  it('leaves a whole IPv4 address as written, with a prefix of an address', () => {
    for (const said of ['from 203.0.113.7', 'from 127.213.1.2, in 127.213.0.0/16', 'from 198.18.255.254/32'])
      expect(maskEveryNumber(said)).toBe(said);
  });
});
