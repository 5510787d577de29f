/**
 * What a mask of the audit's held tokens costs follows the text, not the tokens held: an audit holds
 * a thousand tokens or more (each attempt's session id and state, start tokens, intents, in three
 * spellings each), and one pattern of them all was built again after each new token and tried at
 * each place of every text the report quotes (a second and a half for one line with 20,000 held).
 * The tokens are still found in each spelling, the first held of two that start at one place.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { TokenMask } from '../../testing/audit/token-mask.ts';

afterEach(() => vi.restoreAllMocks());

it('runs no pattern of the tokens held over the text, with 20,000 of them, and still masks each spelling', () => {
  const mask = new TokenMask('http://app.test');
  const tokens = Array.from({ length: 20_000 }, () => randomBytes(24).toString('base64'));
  for (const token of tokens) mask.add('state', token);
  // Every pattern a mask runs over the text, as it runs: none may hold a token.
  const run = vi.spyOn(RegExp.prototype, Symbol.replace);
  const last = tokens.at(-1)!;
  const line = `GET /verify/return?session_id=x&state=${encodeURIComponent(last)} then ${last}.`;
  expect(mask.mask(line)).toBe(
    `GET /verify/return?session_id=x&state=[a state ending ${last.slice(-2)}] then [a state ending ${last.slice(-2)}]`,
  );
  const holdingAToken = (run.mock.contexts as RegExp[]).filter((pattern) =>
    tokens.some((t) => pattern.source.includes(t.slice(0, 8))),
  );
  expect(holdingAToken.map((pattern) => pattern.source.length)).toEqual([]);
});

it('of two tokens whose anchors start at one place, masks by the first held, through the token characters after it', () => {
  const mask = new TokenMask('http://app.test');
  mask.add('session id', 'ses_0123456789abcdefXY');
  // Shorter than an anchor: its whole spelling is its anchor.
  mask.add('start token', 'ses_0123');
  expect(mask.mask('see ses_0123456789abcdefXY-more, and ses_0123 alone')).toBe(
    'see [a session id ending XY], and [a start token ending 23] alone',
  );
});
