/**
 * The client secret as it may be spelt where it leaks: the one list the kit's redaction removes
 * and the integration audit searches for, with the environment's other secrets both remove. It
 * imports nothing, so both may import it.
 */

/**
 * The shortest client secret accepted. At 10 characters, at each of the three alignments a secret
 * can have inside a longer base64 text (a Basic header's `clientId:secret`, an encoded JSON blob),
 * at least 8 base64 characters encode the secret's bytes alone, so its base64 is recognised and
 * redacted wherever it sits. A secret the portal issues is far longer.
 */
export const MIN_SECRET_LENGTH = 10;

/**
 * Other secrets redacted on request (the environment's passwords and tokens) are not checked by
 * the kit: any value long enough to tell apart from ordinary words is removed as far as it can be.
 */
export const MIN_OTHER_SECRET_LENGTH = 4;

/**
 * Names that say a variable holds a secret: …SECRET, …PASSWORD (and PASSWD, PASSPHRASE), …TOKEN,
 * …KEY, …CREDENTIAL(S), and PASS or PWD as a word of their own (`DB_PASS`, `MYSQL_PWD`). Not the
 * shell's PWD and OLDPWD (the working directory: every path printed would be garbled), nor a
 * word that merely starts so (`PGPASSFILE` names a file).
 */
const SECRET_NAME = /SECRET|PASSWORD|PASSWD|PASSPHRASE|TOKEN|KEY|CREDENTIAL|(?:^|_)PASS(?:_|$)|_PWD(?:_|$)/i;

/**
 * Values of `env` whose names say they are secret (SECRET_NAME), as set and trimmed (a value read
 * from a file keeps its newline; the configuration trims it, as the kit asks).
 */
export function environmentSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([key, value]) => SECRET_NAME.test(key) && typeof value === 'string')
    .flatMap(([, value]) => [...new Set([value as string, (value as string).trim()])]);
}

/** Base64 characters shorter than this are not distinctive enough to redact without garbling other base64. */
const MIN_CORE_LENGTH = 8;

/** One spelling of the secret: what it is called in the audit's evidence, and the text itself. */
export interface SecretSpelling {
  name: string;
  text: string;
  /**
   * The fewest characters in a row of `text` the audit counts as a leak of a part of the secret, when
   * its default (a few characters) would spell only one or two of the secret's: a spelling writing
   * each byte long (`\u0073`, `115,`) names this many.
   */
  partLength?: number;
}

/** A part of a spelling writing each byte long counts from this many bytes' worth on (as 12 hex digits spell). */
const MIN_PART_BYTES = 6;

function htmlEscaped(value: string, quote: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", quote);
}

/** As Handlebars and Mustache templates escape it (`=`, `/` and `` ` `` too). */
function templateEscaped(value: string, quote: string): string {
  return htmlEscaped(value, quote).replaceAll('`', '&#x60;').replaceAll('=', '&#x3D;').replaceAll('/', '&#x2F;');
}

/** As JSON put in a page spells it (`<`, `>` and `&` as \u escapes: Express's `json escape`, SSR state). */
function jsonInHtml(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026');
}

/** The secret as a URL's userinfo spells it (`+` kept, `=` and `/` escaped): `url.password = secret`. */
function userinfoEncoded(secret: string): string {
  const url = new URL('http://host');
  url.password = secret;
  return url.password;
}

function base64url(base64: string): string {
  return base64.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/**
 * Inside a longer base64 text the secret's bytes start at one of three alignments; at each, the
 * characters that encode the secret's bytes alone (whole groups of three) are the same whatever
 * surrounds them. Redacting them leaves at most two bytes' worth at either end.
 */
function base64Cores(bytes: Buffer): string[] {
  return [0, 1, 2].flatMap((shift) => {
    const aligned = Buffer.concat([Buffer.alloc(shift), bytes]);
    const core = aligned.toString('base64').slice(shift === 0 ? 0 : 4, Math.floor(aligned.length / 3) * 4);
    return core.length < MIN_CORE_LENGTH ? [] : [core];
  });
}

function base64Spellings(secret: string, clientId: string | undefined): SecretSpelling[] {
  const bytes = Buffer.from(secret, 'utf8');
  const whole = bytes.toString('base64');
  const basic = clientId === undefined ? [] : [Buffer.from(`${clientId}:${secret}`, 'utf8').toString('base64')];
  const cores = base64Cores(bytes);
  return [
    ...basic.flatMap((text) => [
      { name: 'base64 as Basic credentials', text },
      { name: 'base64 as Basic credentials', text: text.replace(/=+$/, '') },
    ]),
    { name: 'base64', text: whole },
    { name: 'base64', text: whole.replace(/=+$/, '') },
    { name: 'base64 (base64url)', text: base64url(whole) },
    ...cores.flatMap((core) => [
      { name: 'base64', text: core },
      { name: 'base64 (base64url)', text: base64url(core) },
    ]),
  ];
}

/** Each spelling as a query or form field spells it too (`+`, `/` and `=` percent-escaped), when that differs. */
function percentEncoded(spellings: SecretSpelling[]): SecretSpelling[] {
  return spellings.flatMap((spelling) => {
    const encoded = encodeURIComponent(spelling.text);
    return encoded === spelling.text
      ? [spelling]
      : [spelling, { name: `${spelling.name}, URL-encoded`, text: encoded }];
  });
}

/** Each percent-encoded spelling with lower-case hex digits too (`%2f`: .NET's UrlEncode and others). */
function withLowerCaseEscapes(spellings: SecretSpelling[]): SecretSpelling[] {
  return spellings.flatMap((spelling) => {
    const lower = spelling.text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
    return lower === spelling.text
      ? [spelling]
      : [spelling, { name: `${spelling.name} (lower-case escapes)`, text: lower }];
  });
}

/**
 * A spelling writing each of the secret's `units` (bytes, or UTF-16 characters) long, with the
 * length of a part of it that counts: MIN_PART_BYTES units' worth, on average.
 */
function unitByUnit(name: string, text: string, units: number): SecretSpelling {
  return { name, text, partLength: Math.ceil((text.length / units) * MIN_PART_BYTES) };
}

/**
 * The secret's bytes in decimal: `JSON.stringify` (and so pino and most JSON loggers) writes a
 * Buffer as `{"type":"Buffer","data":[115,107,…]}`, and an array of them prints `115, 107, …`.
 */
function decimalBytes(secret: string): SecretSpelling[] {
  const bytes = [...Buffer.from(secret, 'utf8')];
  return [',', ', '].map((separator) => unitByUnit('decimal bytes', bytes.join(separator), bytes.length));
}

/**
 * Every character as a `\u` escape, hex digits in either case: an ASCII-only JSON writer escaping
 * everything (jsesc's `escapeEverything`, a `JSON.stringify` replacer) spells it so.
 */
function unicodeEscaped(secret: string): SecretSpelling[] {
  const units = secret.split('');
  const lower = units.map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const upper = lower.replace(/[a-f]/g, (digit) => digit.toUpperCase());
  return [lower, upper].map((text) => unitByUnit('every character a \\u escape', text, units.length));
}

/**
 * Every spelling of `secret`: as is, URL-encoded (as a component, a whole URL, a form field and a
 * URL's userinfo), HTML-escaped (also as templates escape), JSON-escaped (also for a page), hex,
 * base64 (whole, inside any longer base64 at each alignment, and as the Basic credentials of
 * `clientId` when given), each base64 also URL-encoded; percent escapes in either case; its bytes in
 * decimal (a Buffer as JSON) and every character a `\u` escape. The most common first (the audit
 * names the first it finds); no empty or repeated text.
 */
export function secretSpellings(secret: string, clientId?: string): SecretSpelling[] {
  const hex = Buffer.from(secret, 'utf8').toString('hex');
  const spellings = withLowerCaseEscapes([
    { name: 'as is', text: secret },
    { name: 'URL-encoded', text: encodeURIComponent(secret) },
    { name: 'URL-encoded', text: encodeURI(secret) },
    { name: 'form-encoded', text: new URLSearchParams({ s: secret }).toString().slice(2) },
    { name: "in a URL's userinfo", text: userinfoEncoded(secret) },
    { name: 'HTML-escaped', text: htmlEscaped(secret, '&#39;') },
    { name: 'HTML-escaped', text: htmlEscaped(secret, '&#x27;') },
    { name: 'HTML-escaped by a template', text: templateEscaped(secret, '&#x27;') },
    { name: 'HTML-escaped by a template', text: templateEscaped(secret, '&#39;') },
    { name: 'JSON-escaped for a page', text: jsonInHtml(secret) },
    { name: 'JSON-escaped', text: JSON.stringify(secret).slice(1, -1) },
    { name: 'JSON-escaped', text: JSON.stringify(secret).slice(1, -1).replaceAll('/', '\\/') },
    { name: 'hex', text: hex },
    { name: 'hex', text: hex.toUpperCase() },
    // A Buffer as util.inspect (and so console.log and most loggers) prints it: `<Buffer 73 6b …>`.
    { name: 'hex bytes', text: hex.replace(/..(?!$)/g, '$& ') },
    ...percentEncoded(base64Spellings(secret, clientId)),
  ]);
  spellings.push(...decimalBytes(secret), ...unicodeEscaped(secret));
  const seen = new Set<string>();
  return spellings.filter((spelling) => spelling.text !== '' && !seen.has(spelling.text) && seen.add(spelling.text));
}
