/**
 * The pages under test are read as a browser reads them: an attribute value's character references
 * are decoded once, named or numeric. A value decoded twice (`&#38;lt;` read as `<`), or a named
 * reference left as written (`&apos;`), submits a field the browser would not, and the audit and
 * submitForm would judge another form than the user's. A form is read as a browser submits it (the
 * HTML Standard's "constructing the entry list"): a control the browser leaves out, or one it adds,
 * makes the audit and submitForm post another form than the user's.
 */
import { describe, expect, it } from 'vitest';
import { formsIn } from '../../testing/html-forms.ts';
import { decodeHtml } from '../../testing/html.ts';

describe('character references in attribute values', () => {
  it('are decoded once: a reference to "&" followed by a name stays that text', () => {
    expect(decodeHtml('a&#38;lt;b &#x26;amp; &amp;quot;')).toBe('a&lt;b &amp; &quot;');
  });

  it('named references browsers decode in a token or a name (&apos;, &nbsp;, &plus;, &equals;, &sol;) are read as the character', () => {
    expect(decodeHtml('it&apos;s&nbsp;a&plus;b&equals;&sol;')).toBe("it's\u00a0a+b=/");
  });

  it('the Latin-1 names (&eacute;, &copy;, a French page’s accents) and the capital legacy ones are read as the character, with or without their ;', () => {
    expect(decodeHtml('Num&eacute;ro &copy; &AMP; &Agrave;&yuml;&nbsp;&eacute x&COPY')).toBe('Numéro © & Àÿ\u00a0é x©');
    expect(decodeHtml('&eacutex &notit;')).toBe('&eacutex &notit;');
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

describe('formsIn submits what a browser submits', () => {
  const fieldsOf = (body: string, attributes = 'method=post action=/pay') =>
    formsIn(`<form ${attributes}>${body}</form>`)[0];

  it('a disabled control, or one inside a disabled fieldset (but not in its first legend), is never submitted', () => {
    const form = fieldsOf(
      `<input type=hidden name=_csrf value=t><input type=hidden name=amount value=900 disabled>` +
        `<fieldset disabled><legend><input type=hidden name=kept value=1></legend><input type=hidden name=iban value=EVIL>` +
        `<legend><input type=hidden name=second value=2></legend></fieldset><input type=hidden name=after value=3>`,
    );
    expect(form?.fields).toEqual({ _csrf: 't', kept: '1', after: '3' });
  });

  it('only the submitter is submitted: the first submit button; a type=button or type=reset button never is', () => {
    const form = fieldsOf(
      `<button type=button name=intent value=preview>Preview</button><button type=reset name=intent value=clear>Clear</button>` +
        `<button name=intent value=confirm>Confirm</button><input type=submit name=intent value=cancel>`,
    );
    expect(form?.fields).toEqual({ intent: 'confirm' });
    expect(fieldsOf(`<input type=submit name=go value=Pay><button name=other value=1>x</button>`)?.fields).toEqual({
      go: 'Pay',
    });
    // A disabled button cannot be clicked: the first one a user can press is the submitter.
    expect(fieldsOf(`<button name=a value=1 disabled>a</button><button name=b value=2>b</button>`)?.fields).toEqual({
      b: '2',
    });
  });

  it('an unquoted value holding a quote ends its tag at the next > as a browser does', () => {
    const form = fieldsOf(`<input type=hidden name=note value=it's><input type=hidden name=_csrf value=t"k>`);
    expect(form?.fields).toEqual({ note: "it's", _csrf: 't"k' });
    expect(
      formsIn(`<form method=post action=/it's>x</form><form method=post action=/next>y</form>`).map((f) => f.action),
    ).toEqual(["/it's", '/next']);
  });

  it('a checkbox or radio is submitted only when checked ("on" without a value); a select its selected option or its first', () => {
    const form = fieldsOf(
      `<input type=checkbox name=terms><input type=checkbox name=news checked><input type=radio name=plan value=a>` +
        `<input type=radio name=plan value=b checked><select name=country><option value="">Pick</option><option selected>FR</option></select>` +
        `<select name=size><option disabled>S</option><option value=m>Medium</option></select>` +
        `<select name=none multiple><option>1</option></select>`,
    );
    expect(form?.fields).toEqual({ news: 'on', plan: 'b', country: 'FR', size: 'm' });
  });

  it('a textarea submits its text (decoded, the first newline dropped, line breaks as CRLF); a text field its value', () => {
    const form = fieldsOf(`<textarea name=note>
line &amp; one
line <b>two</b></textarea><input name=q value="x"><input type=password name=p>`);
    expect(form?.fields).toEqual({ note: 'line & one\r\nline <b>two</b>', q: 'x', p: '' });
  });

  it('a control with form= belongs to that form wherever it is, and not to the form around it', () => {
    const [first, second] = formsIn(
      `<form id=pay method=post action=/pay><input type=hidden name=a value=1><input type=hidden name=b value=2 form=other></form>` +
        `<input type=hidden name=c value=3 form=pay><form id=other method=post action=/other></form>`,
    );
    expect(first?.fields).toEqual({ a: '1', c: '3' });
    expect(second?.fields).toEqual({ b: '2' });
  });

  it("the submitter's formaction and formmethod are where and how the form goes", () => {
    const form = fieldsOf(`<button name=go value=1 formaction=/elsewhere formmethod=GET>Go</button>`);
    expect([form?.action, form?.method]).toEqual(['/elsewhere', 'get']);
    expect(fieldsOf('<button>Go</button>', 'method=PUT action=/x')?.method).toBe('get');
  });

  it('an image submitter sends its click point (name.x, name.y); a file input with no file sends its name empty', () => {
    const form = fieldsOf(`<input type=file name=doc><input type=image name=pay src=p.png value=ignored>`);
    expect(form?.fields).toEqual({ doc: '', 'pay.x': '0', 'pay.y': '0' });
  });

  it('every value of a name given more than once is submitted, in document order; fields keeps the first of each name', () => {
    const form = fieldsOf(
      `<input type=hidden name=tag value=a><select name=tag multiple><option selected>b</option><option>x</option><option selected>c</option></select>` +
        `<input type=checkbox name=tag value=d checked><input type=checkbox name=tag value=y><input type=hidden name=other value=1><input type=hidden name=tag value=e>`,
    );
    expect(form?.entries).toEqual([
      ['tag', 'a'],
      ['tag', 'b'],
      ['tag', 'c'],
      ['tag', 'd'],
      ['other', '1'],
      ['tag', 'e'],
    ]);
    expect(form?.fields).toEqual({ tag: 'a', other: '1' });
  });

  it("the enctype is the submitter's formenctype, else the form's enctype, urlencoded when absent or unknown; a file input is an empty file", () => {
    expect(fieldsOf('<button>Go</button>')?.enctype).toBe('application/x-www-form-urlencoded');
    expect(fieldsOf('<button>Go</button>', 'method=post enctype=MULTIPART/form-data')?.enctype).toBe(
      'multipart/form-data',
    );
    expect(fieldsOf('<button>Go</button>', 'method=post enctype=text/json')?.enctype).toBe(
      'application/x-www-form-urlencoded',
    );
    const pressed = fieldsOf(
      '<input type=file name=doc><button formenctype=text/plain>Go</button>',
      'method=post enctype=multipart/form-data',
    );
    expect([pressed?.enctype, pressed?.entries]).toEqual(['text/plain', [['doc', '', 'file']]]);
  });

  it('a form in a comment or a script is no form', () => {
    expect(
      formsIn(
        `<!-- <form action=/old><input type=hidden name=a value=1></form> --><script>"<form action=/js></form>"</script>`,
      ),
    ).toEqual([]);
  });
});
