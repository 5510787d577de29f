/**
 * A phone number grouped with slashes in a request path ("/call/07400/123456") or in a value of its
 * query ("/call?to=07400/123456") is masked on the confirmation page as one typed in a single part
 * is: its groups are read together, with a word glued before the first or after the last. Ids a
 * reader needs stay as written: a year and a month, ids between words, a whole IPv4 address with
 * its prefix, a file named for a year.
 */
import { describe, expect, it } from 'vitest';
import { maskNumbersInPath } from '../../middleware/numbers/mask-number.ts';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { confirmPageFor } from '../support/confirm-page.ts';

/** A path holding a number grouped by slashes, the number as the kit reads it, and the path as shown. */
const GROUPED_BY_SLASHES = [
  ['/call/07400/123456/', '07400 123456', 'GB', '/call/••\u00a056/'],
  ['/n/+44/7400/123456', '+44 7400 123456', 'GB', '/n/••\u00a056'],
  ['/n/%2B44/7400/123456?tab=calls', '+44 7400 123456', 'GB', '/n/••\u00a056?tab=calls'],
  ['/to/(020)/7946/0958/close', '(020) 7946 0958', 'GB', '/to/••\u00a058/close'],
  ['/lines/+683/4002', '+683 4002', 'GB', '/lines/••\u00a002'],
  ['/call?to=07400/123456', '07400 123456', 'GB', '/call?to=••\u00a056'],
  ['/send?lang=en&to=+44/7400/123456', '+44 7400 123456', 'GB', '/send?lang=en&to=••\u00a056'],
  // Any character may come percent-encoded: a part is judged by what it spells.
  ['/call/%30%37%34%30%30/123456', '07400 123456', 'GB', '/call/••\u00a056'],
  ['/call/%2B44/%37400/12345%36', '+44 7400 123456', 'GB', '/call/••\u00a056'],
  ['/call?to=%2b44%207400/123456', '+44 7400 123456', 'GB', '/call?to=••\u00a056'],
  // An empty part between groups (a doubled slash) is no word: the groups are still read together.
  ['/07400//123456/', '07400 123456', 'GB', '/••\u00a056/'],
  ['/n/+44/7400///123456', '+44 7400 123456', 'GB', '/n/••\u00a056'],
  // A scheme or a word glued to the first group: that part starts the groups read together.
  ['/tel:07400/123456', '07400 123456', 'GB', '/••\u00a056'],
  ['/tel:+44-7400-123456', '+44 7400 123456', 'GB', '/••\u00a056'],
  ['/n/tel:+44-7400/123456', '+44 7400 123456', 'GB', '/n/••\u00a056'],
  ['/call07400/123456?tab=calls', '07400 123456', 'GB', '/••\u00a056?tab=calls'],
  ['/sms:%2B44/7400/123456', '+44 7400 123456', 'GB', '/••\u00a056'],
  // A word glued after the last group (a file's extension): that part ends the groups read together.
  ['/07400/123456.json', '07400 123456', 'GB', '/••\u00a056'],
  ['/call/07400/123456.html', '07400 123456', 'GB', '/call/••\u00a056'],
  ['/n/+44/7400//123456.vcf?tab=calls', '+44 7400 123456', 'GB', '/n/••\u00a056?tab=calls'],
  ['/call?to=07400/12345%36.vcf', '07400 123456', 'GB', '/call?to=••\u00a056'],
] as const;

const READABLE = [
  '/orders/2024/11',
  '/users/42/posts/7',
  '/hosts/127.213.0.0/16',
  '/v2/teams/15/3?page=2',
  '/reports?month=2024/11',
  '/reports/2024-11',
  '/orders//2024/11/',
  '/hosts/127.213.0.0//16',
  '/v1/2024/11',
  '/v1/2024/11.json',
  '/files/report-2024.json',
  '/reports/2024/11.csv?page=2',
  '/release-1.2.3/2024/11',
  // Escapes spell few digits (a space is %20), a malformed one is left as written.
  '/search/a%20b%20c%20d%20e',
  '/files/%E0%A4%A/50%25/%ZZ',
];

describe('a phone number grouped by slashes in a path the kit shows', () => {
  it('is masked whole on the confirmation page: no group of it shown', () => {
    for (const [path, number, country, shown] of GROUPED_BY_SLASHES) {
      expect(readEnteredNumber(number, country), number).toBeDefined();
      expect(maskNumbersInPath(path), path).toBe(shown);
      const page = confirmPageFor(path);
      const groups = number.match(/\d+/g)!.filter((group) => group.length >= 3);
      for (const group of groups) expect(page, `${path}: ${group}`).not.toContain(group);
    }
  });

  it('leaves a year and a month, ids between words and a whole address with its prefix as written', () => {
    for (const path of READABLE) {
      expect(maskNumbersInPath(path)).toBe(path);
      expect(confirmPageFor(path)).toContain(`<code>POST ${path.replace('&', '&amp;')}</code>`);
    }
  });
});
