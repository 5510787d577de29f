/**
 * leak.secret reads a page as a browser shows it, its tags removed, so a secret a template cut into
 * elements each shorter than a part (`<wbr>`) is found. A literal `<` that opens no tag (`< 40`,
 * `<=`, `<3`: a browser shows it as text) earlier in the same text no longer drops the characters
 * up to the next tag's `>`, the first piece of the secret with them (before: not found).
 */
import { describe, expect, it } from 'vitest';
import { secretForms, secretSpellingIn } from '../../testing/audit/secret.ts';

// A 20-character secret (the shortest the kit takes is 10): two pieces of 10, each shorter than a part.
const SECRET = 'Zq8sLw3Xv1Kp7Tm2Rd9B';
const PAGE = `<p>Keys are 20 characters (< 40): ${SECRET.slice(0, 10)}<wbr>${SECRET.slice(10)}</p>`;

describe('a tag-split secret after a literal "<"', () => {
  const forms = secretForms('acme', SECRET);

  it('is found as the browser shows it, as on the same page without the "<"', () => {
    expect(secretSpellingIn(forms, PAGE.replace('(< 40)', '(under 40)'), true)).toBe("as is, split by a page's tags");
    expect(secretSpellingIn(forms, PAGE, true)).toBe("as is, split by a page's tags");
  });

  it('still reads a comment and a closing tag as nothing', () => {
    const page = `<p>${SECRET.slice(0, 10)}<!-- cut --></p><b>${SECRET.slice(10)}</b>`;
    expect(secretSpellingIn(forms, page, true)).toBe("as is, split by a page's tags");
  });
});
