/**
 * The pages under test are read as a browser reads them: an attribute value's character references
 * are decoded once, named or numeric. A value decoded twice (`&#38;lt;` read as `<`), or a named
 * reference left as written (`&apos;`), submits a field the browser would not, and the audit and
 * submitForm would judge another form than the user's.
 */
import { describe, expect, it } from 'vitest';
import { decodeHtml, formsIn } from '../../testing/html.ts';

describe('character references in attribute values', () => {
  it('are decoded once: a reference to "&" followed by a name stays that text', () => {
    expect(decodeHtml('a&#38;lt;b &#x26;amp; &amp;quot;')).toBe('a&lt;b &amp; &quot;');
  });

  it('named references browsers decode in a token or a name (&apos;, &nbsp;, &plus;, &equals;, &sol;) are read as the character', () => {
    expect(decodeHtml('it&apos;s&nbsp;a&plus;b&equals;&sol;')).toBe("it's\u00a0a+b=/");
  });

  it('a reference no character has (past U+10FFFF, a surrogate, zero) is U+FFFD, and a name an object has is no reference', () => {
    expect(decodeHtml('&#x110000;&#99999999999999999999;&#xD800;&#0;&constructor;&__proto__;')).toBe(
      '\ufffd\ufffd\ufffd\ufffd&constructor;&__proto__;',
    );
  });

  it('formsIn submits the hidden fields a browser would, their values decoded once', () => {
    const [form] = formsIn(
      `<form method=post action=/pay><input type=hidden name=_csrf value="k&#38;lt;9&plus;z&equals;"><input type='hidden' name='note' value='it&apos;s'></form>`,
    );
    expect(form?.fields).toEqual({ _csrf: 'k&lt;9+z=', note: "it's" });
  });
});
