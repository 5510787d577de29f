/**
 * The leak checks read each text once, however many spellings they look for: the spellings are
 * indexed once per list, and a text is compared with each spelling only when the index found one
 * in it (to name the first listed). Before, every text was searched for every spelling in turn (the
 * secret's dozens, a run's handoffs' thousands, over the tens of thousands of texts a run records:
 * seconds of every audit). Counted, not timed: each read of a spelling's text is one comparison.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handoffForms, secretForms, secretSpellingIn, type SecretForm } from '../../testing/audit/secret.ts';

const SECRET = 'sk_live_7Hq2xW9mVb4Lr8TzP1cN6dKs';

/** Copies of `forms` counting the reads of their text. */
function counted(forms: readonly SecretForm[]): { forms: SecretForm[]; reads: () => number } {
  let reads = 0;
  const copies = forms.map((form) => ({
    ...form,
    get text() {
      reads += 1;
      return form.text;
    },
  }));
  return { forms: copies, reads: () => reads };
}

/** Texts as a run records them (URLs, pages with references and escapes, cookies), none holding a spelling. */
const TEXTS = Array.from(
  { length: 300 },
  (_, i) =>
    [
      `http://127.0.0.1:3000/account?n=${i}&next=%2Fdone%3Fok%3D1`,
      `<!doctype html><title>Account ${i}</title><p>Hello &amp; welcome</p><a href="/x?i=${i}&amp;y=%41">go</a>`,
      `sid=${randomBytes(24).toString('base64url')}; Path=/; HttpOnly; SameSite=Lax`,
    ][i % 3]!,
);

/** The most reads a list's index takes of each spelling: none is read again for a text it is not in. */
const READS_PER_SPELLING = 4;

describe('the leak search, counted', () => {
  it("reads the client secret's spellings only to index them, over 300 texts without it", () => {
    const { forms, reads } = counted(secretForms('acme', SECRET));
    for (const text of TEXTS) expect(secretSpellingIn(forms, text, true)).toBeUndefined();
    expect(reads()).toBeLessThanOrEqual(READS_PER_SPELLING * forms.length);
  });

  it("reads a run's handoffs' spellings (a thousand and more) only to index them, over the same texts", () => {
    const handoffs = Array.from({ length: 100 }, () => randomBytes(32).toString('base64url'));
    const { forms, reads } = counted(handoffs.flatMap((handoff) => handoffForms(handoff)));
    expect(forms.length).toBeGreaterThan(1000);
    for (const text of TEXTS) expect(secretSpellingIn(forms, text, true)).toBeUndefined();
    expect(reads()).toBeLessThanOrEqual(READS_PER_SPELLING * forms.length);
  });

  it('still names each spelling found, reading the list once more for each text holding one', () => {
    const { forms, reads } = counted(secretForms('acme', SECRET));
    const holding: [string, string][] = [
      [`${'x'.repeat(50_000)} client_secret=${encodeURIComponent(SECRET)}`, 'as is'],
      [`{"hint":"${SECRET.slice(3, 17)}"}`, '12 characters or more of it, as is'],
      [`<p>${SECRET.match(/.{1,8}/g)!.join('<wbr>')}</p>`, "as is, split by a page's tags"],
      [JSON.stringify({ s: Buffer.from(SECRET) }), 'decimal bytes'],
    ];
    for (const [text, name] of holding) expect(secretSpellingIn(forms, text, true)).toBe(name);
    for (const text of TEXTS) expect(secretSpellingIn(forms, text, true)).toBeUndefined();
    expect(reads()).toBeLessThanOrEqual((READS_PER_SPELLING + holding.length) * forms.length);
  });
});
