/**
 * The client secret as it may be spelt where it leaks, and the scrubbing of everything the audit
 * reports: "The client secret appears only in the Authorization header", so the audit's own
 * evidence, report and output never quote it in any encoding either.
 */

/** One spelling of the secret: what it is called in evidence, and the text searched for. */
export interface SecretForm {
  name: string;
  text: string;
}

function htmlEscaped(value: string, quote: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, quote);
}

/** As Handlebars and Mustache templates escape it (`=`, `/` and `` ` `` too). */
function templateEscaped(value: string, quote: string): string {
  return htmlEscaped(value, quote).replace(/`/g, '&#x60;').replace(/=/g, '&#x3D;').replace(/\//g, '&#x2F;');
}

/** As JSON put in a page spells it (`<`, `>` and `&` as \u escapes: Express's `json escape`, SSR state). */
function jsonInHtml(value: string): string {
  return JSON.stringify(value).slice(1, -1).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

function base64Forms(name: string, bytes: Buffer): SecretForm[] {
  // Whole, with and without its padding, however short the secret.
  const whole = bytes.toString('base64');
  const forms: SecretForm[] = [
    { name, text: whole },
    { name, text: whole.replace(/=+$/, '') },
    { name: `${name} (base64url)`, text: bytes.toString('base64url') },
  ];
  // Inside a longer base64 text the secret's bytes may start at any of three offsets; the
  // characters that hold only its own bits are the same whatever surrounds it.
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const head = offset === 0 ? 0 : 4;
    const core = encoded.replace(/=+$/, '').slice(head, offset === 0 && bytes.length % 3 === 0 ? undefined : -3);
    if (core.length < 12) continue;
    forms.push(
      { name, text: core },
      { name: `${name} (base64url)`, text: core.replace(/\+/g, '-').replace(/\//g, '_') },
    );
  }
  return forms;
}

/**
 * Each form as a query or form field spells it too (`+`, `/` and `=` percent-escaped), when that
 * differs: base64 is often put in a URL as is.
 */
function percentEncoded(forms: SecretForm[]): SecretForm[] {
  return forms.flatMap((form) => {
    const encoded = encodeURIComponent(form.text);
    return encoded === form.text ? [form] : [form, { name: `${form.name}, URL-encoded`, text: encoded }];
  });
}

/** Each percent-encoded form with lower-case hex digits too (`%2f`: .NET's UrlEncode and others). */
function withLowerCaseEscapes(forms: SecretForm[]): SecretForm[] {
  return forms.flatMap((form) => {
    const lower = form.text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
    return lower === form.text ? [form] : [form, { name: `${form.name} (lower-case escapes)`, text: lower }];
  });
}

/** The secret as a URL's userinfo spells it (`+` kept, `=` and `/` escaped). */
function userinfoEncoded(secret: string): string {
  const url = new URL('http://host');
  url.password = secret;
  return url.password;
}

/**
 * Every spelling searched for: as is, URL-, form- and userinfo-encoded, HTML-escaped (also as
 * templates escape), JSON-escaped (also for a page), hex, base64 (whole, inside a longer value and
 * as Basic credentials, either also URL-encoded); percent escapes in either case.
 */
export function secretForms(clientId: string, secret: string): SecretForm[] {
  const forms: SecretForm[] = withLowerCaseEscapes([
    { name: 'as is', text: secret },
    { name: 'URL-encoded', text: encodeURIComponent(secret) },
    { name: 'form-encoded', text: new URLSearchParams({ s: secret }).toString().slice(2) },
    { name: "in a URL's userinfo", text: userinfoEncoded(secret) },
    { name: 'HTML-escaped', text: htmlEscaped(secret, '&#39;') },
    { name: 'HTML-escaped', text: htmlEscaped(secret, '&#x27;') },
    { name: 'HTML-escaped by a template', text: templateEscaped(secret, '&#x27;') },
    { name: 'HTML-escaped by a template', text: templateEscaped(secret, '&#39;') },
    { name: 'JSON-escaped for a page', text: jsonInHtml(secret) },
    { name: 'JSON-escaped', text: JSON.stringify(secret).slice(1, -1) },
    { name: 'JSON-escaped', text: JSON.stringify(secret).slice(1, -1).replace(/\//g, '\\/') },
    { name: 'hex', text: Buffer.from(secret).toString('hex') },
    { name: 'hex', text: Buffer.from(secret).toString('hex').toUpperCase() },
    ...percentEncoded([
      { name: 'base64 as Basic credentials', text: Buffer.from(`${clientId}:${secret}`).toString('base64') },
      ...base64Forms('base64', Buffer.from(secret)),
    ]),
  ]);
  const seen = new Set<string>();
  return forms.filter((form) => form.text !== '' && !seen.has(form.text) && seen.add(form.text));
}

/** The first spelling of the secret found in `text`, if any. */
export function findSecret(forms: readonly SecretForm[], text: string): SecretForm | undefined {
  return forms.find((form) => text.includes(form.text));
}

const MARK = '[client secret]';

/**
 * `text` with every spelling of the secret replaced, and any tail that is the start of one (a
 * value cut short) replaced too.
 */
export function scrubSecret(forms: readonly SecretForm[], text: string): string {
  let out = text;
  for (const form of [...forms].sort((a, b) => b.text.length - a.text.length)) out = out.split(form.text).join(MARK);
  for (const form of forms) {
    for (let length = Math.min(form.text.length - 1, out.length); length >= 8; length--) {
      if (out.endsWith(form.text.slice(0, length))) {
        out = `${out.slice(0, out.length - length)}${MARK}`;
        break;
      }
    }
  }
  return out;
}
