/**
 * What a text shows once read as a browser reads it: its character references decoded (`&#x73;`,
 * `&#115;`, `&amp;`), then its percent escapes (`%73`, `%2573` encoded twice), each character with
 * where it is written. The kit's redaction reads a message so (the client secret written character
 * by character is still the secret), and the integration audit reads what it quotes so. It imports
 * only the kit's percent decoding, a leaf too, so both may import it.
 */
import { spelledPart } from './numbers/mask-number.ts';

/**
 * HTML's names for U+00A0 to U+00FF, in order (`&eacute;`, `&copy;`): a French page writes its
 * accents so. A browser reads each of them without its `;` too.
 */
const LATIN_1 = (
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn ' +
  'sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave ' +
  'Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ' +
  'ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN ' +
  'szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute ' +
  'icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml ' +
  'yacute thorn yuml'
).split(' ');

/** ASCII's own names a browser also reads in capitals, and without their `;`. */
const ASCII_LEGACY = { AMP: '&', LT: '<', GT: '>', QUOT: '"', COPY: '\u00a9', REG: '\u00ae' };

/** Named character references a page may use in a value (a token, a name, a path), and what they stand for. */
const NAMED: ReadonlyMap<string, string> = new Map(
  Object.entries({
    ...Object.fromEntries(LATIN_1.map((name, i) => [name, String.fromCodePoint(0xa0 + i)])),
    ...ASCII_LEGACY,
    amp: '&',
    lt: '<',
    gt: '>',
    quot: '"',
    apos: "'",
    plus: '+',
    equals: '=',
    sol: '/',
    bsol: '\\',
    num: '#',
    percnt: '%',
    colon: ':',
    semi: ';',
    comma: ',',
    period: '.',
    lowbar: '_',
    hyphen: '-',
    excl: '!',
    quest: '?',
    commat: '@',
    dollar: '$',
    ast: '*',
    lpar: '(',
    rpar: ')',
    lsqb: '[',
    rsqb: ']',
    lcub: '{',
    rcub: '}',
    verbar: '|',
    grave: '`',
    Hat: '^',
    tilde: '~',
    zwnj: '\u200c',
    zwj: '\u200d',
    // The spaces and dashes a page groups a number's digits with: a reader sees the number whole.
    ensp: '\u2002',
    emsp: '\u2003',
    emsp13: '\u2004',
    emsp14: '\u2005',
    numsp: '\u2007',
    puncsp: '\u2008',
    thinsp: '\u2009',
    ThinSpace: '\u2009',
    hairsp: '\u200a',
    VeryThinSpace: '\u200a',
    MediumSpace: '\u205f',
    NoBreak: '\u2060',
    dash: '\u2010',
    ndash: '\u2013',
    mdash: '\u2014',
    horbar: '\u2015',
    minus: '\u2212',
  }),
);

/** The references a browser also reads without their `;` (where no letter, digit or `=` follows). */
const LEGACY = new Set(['amp', 'lt', 'gt', 'quot', ...LATIN_1, ...Object.keys(ASCII_LEGACY)]);

/** Numeric, with or without `;`; named, with it or (a legacy name) without. One pass: a result is never read again. */
const REFERENCE = /&(?:#[xX]([0-9a-fA-F]+);?|#([0-9]+);?|([A-Za-z][A-Za-z0-9]*)(;?))/g;

/** A code point as a browser reads its reference: none, a surrogate or past U+10FFFF is U+FFFD. */
function codePoint(value: number): string {
  const invalid = !Number.isFinite(value) || value === 0 || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff);
  return String.fromCodePoint(invalid ? 0xfffd : value);
}

/** What a browser reads for one match of REFERENCE in `value`: the match as written when it stands for nothing. */
function referenceText(value: string, found: readonly (string | undefined)[], at: number): string {
  const [written = '', hex, decimal, name, semicolon] = found;
  // A number too long to be a character is past U+10FFFF (Infinity too).
  if (hex !== undefined) return codePoint(Number.parseInt(hex, 16));
  if (decimal !== undefined) return codePoint(Number(decimal));
  const character = name === undefined ? undefined : NAMED.get(name);
  if (character === undefined) return written;
  if (semicolon === ';') return character;
  const after = value[at + written.length] ?? '';
  return LEGACY.has(name as string) && !/[A-Za-z0-9=]/.test(after) ? character : written;
}

/**
 * An attribute value or text as written in HTML, decoded as a browser decodes it: each character
 * reference once (`&#38;lt;` is the text `&lt;`), numeric or named; an unknown name stays as written.
 */
export function decodeHtml(value: string): string {
  return value.replace(
    REFERENCE,
    (written: string, hex?: string, decimal?: string, name?: string, semicolon?: string, at = 0) =>
      referenceText(value, [written, hex, decimal, name, semicolon], at),
  );
}

/** Each character reference `value` holds as `decodeHtml` reads it: where it is written, as written, and what it stands for. */
export function htmlReferences(value: string): { at: number; written: string; text: string }[] {
  return [...value.matchAll(REFERENCE)].map((found) => ({
    at: found.index,
    written: found[0],
    text: referenceText(value, found, found.index),
  }));
}

/** One character percent-encoded as UTF-8, once or again: "%30", "%EF%BC%90", "%2530". */
const ENCODED_CHARACTER = /%(?:25)*[\da-f]{2}(?:%(?:25)*[89ab][\da-f])*/gi;

/** What `escapes` spell, decoded until nothing more decodes; a malformed escape stays as written. */
function fullySpelled(escapes: string): string {
  let spelled = escapes;
  for (let next = spelledPart(spelled); next !== spelled; next = spelledPart(spelled)) spelled = next;
  return spelled;
}

/** `text` as it spells: each percent-encoded character decoded to the end, a malformed escape as written. */
export function spelledText(text: string): string {
  return text.replace(ENCODED_CHARACTER, fullySpelled);
}

/** A text as it reads, with where the characters written for each of its characters start and end. */
export interface ReadText {
  text: string;
  start: number[];
  end: number[];
}

/** One run of `text` read as another: where it is written, as written, and what it reads as. */
export interface ReadRun {
  at: number;
  written: string;
  text: string;
}

/** `text` read with each of `runs` (in order, none overlapping) as what it reads as, the rest as written. */
export function readWith(text: string, runs: Iterable<ReadRun>): ReadText {
  const read: ReadText = { text: '', start: [], end: [] };
  const spell = (characters: string, start: number, end: number) => {
    for (let i = 0; i < characters.length; i += 1) {
      read.start.push(start);
      read.end.push(end);
    }
    read.text += characters;
  };
  let at = 0;
  for (const run of runs) {
    for (; at < run.at; at += 1) spell(text.charAt(at), at, at + 1);
    at = run.at + run.written.length;
    spell(run.text, run.at, at);
  }
  for (; at < text.length; at += 1) spell(text.charAt(at), at, at + 1);
  return read;
}

/** `text` as it spells (`spelledText`), with where each character spelled is written. */
export function spelledPlaces(text: string): ReadText {
  return readWith(
    text,
    [...text.matchAll(ENCODED_CHARACTER)].map((found) => ({
      at: found.index,
      written: found[0],
      text: fullySpelled(found[0]),
    })),
  );
}

/** `outer`, read from `inner.text`, with its places in what `inner` was read from. */
export function readThrough(inner: ReadText, outer: ReadText): ReadText {
  return {
    text: outer.text,
    start: outer.start.map((at) => inner.start[at] ?? at),
    end: outer.end.map((at) => inner.end[at - 1] ?? at),
  };
}

/** `text` as a browser shows it, with where each character is written: its character references decoded, then its percent escapes. */
export function shownPlaces(text: string): ReadText {
  const references = readWith(text, htmlReferences(text));
  return readThrough(references, spelledPlaces(references.text));
}

/**
 * Characters a browser shows as nothing: a soft hyphen (where the line does not break there),
 * zero-width spaces and joiners, a word joiner, a byte order mark. A template that breaks long
 * words puts them in a value; its reader still sees it whole.
 */
const INVISIBLE_CHARACTER = '[\\u00ad\\u200b-\\u200d\\u2060\\ufeff]';
const INVISIBLE = new RegExp(INVISIBLE_CHARACTER, 'g');

/**
 * A tag or a comment, with the spaces and line breaks beside it: what a page's reader never sees. A
 * `<` that opens neither (`< 40`, `<=`) is text a browser shows, not the start of a tag.
 */
const MARKUP = /\s*(?:<!--[\s\S]*?-->|<\/?[a-zA-Z][^>]*>)\s*/g;

/** `text` without its tags and comments, nor the spaces and line breaks beside them (MARKUP). */
export function withoutMarkup(text: string): string {
  // Most texts hold no tag: the pattern is not tried at each space of theirs.
  return text.includes('<') ? text.replace(MARKUP, '') : text;
}

/** `text` without its tags and comments (MARKUP), each character placed where it is written; undefined when it holds none. */
export function markupLeftOut(text: string): ReadText | undefined {
  if (!text.includes('<')) return undefined;
  const runs = [...text.matchAll(MARKUP)].map((found) => ({ at: found.index, written: found[0], text: '' }));
  return runs.length === 0 ? undefined : readWith(text, runs);
}

/** `text` without the characters a browser shows as nothing (INVISIBLE). */
export function withoutInvisible(text: string): string {
  return text.replace(INVISIBLE, '');
}

/** `read` without the characters a browser shows as nothing, each character still placed where it is written. */
function invisibleLeftOut(read: ReadText): ReadText {
  const runs = [...read.text.matchAll(INVISIBLE)].map((found) => ({ at: found.index, written: found[0], text: '' }));
  return runs.length === 0 ? read : readThrough(read, readWith(read.text, runs));
}

/**
 * `text` with its character references decoded, then with its percent escapes decoded too, then
 * without the characters a browser shows as nothing: each reading a browser gives it.
 */
export function shownReadings(text: string): ReadText[] {
  const references = readWith(text, htmlReferences(text));
  const spelled = readThrough(references, spelledPlaces(references.text));
  const seen = invisibleLeftOut(spelled);
  return seen === spelled ? [references, spelled] : [references, spelled, seen];
}

/**
 * A percent escape, a character reference or a character shown as nothing: only a text holding
 * one shows other than it writes. The kit redacts every KitError and log line, most of which hold
 * none: those are not read again.
 */
const MAY_SHOW_OTHERWISE = new RegExp(`%[\\da-f]{2}|&#?[a-z\\d]|${INVISIBLE_CHARACTER}`, 'i');

/** Runs of this many characters, looked up among `pieces`. */
export interface Pieces {
  size: number;
  pieces: ReadonlySet<string>;
}

/**
 * `covered` (made when needed, one flag per character of `text`) with where `text` writes each of
 * `texts`, and each `size` characters in a row of `pieces`, in what it shows (`shownReadings`): the
 * run of references or escapes that spells one, where it is written. As given when none is found.
 */
export function coverShown(
  text: string,
  texts: readonly string[],
  pieces?: Pieces,
  covered?: Uint8Array,
): Uint8Array | undefined {
  if (texts.length === 0 || !MAY_SHOW_OTHERWISE.test(text)) return covered;
  // Most texts with an escape or a reference hold no secret: where is worked out only for one that does.
  const references = decodeHtml(text);
  const holds = (shown: string) =>
    shown !== text &&
    (texts.some((form) => shown.includes(form)) || (pieces !== undefined && holdsPiece(shown, pieces)));
  const spelled = spelledText(references);
  if (!holds(references) && !holds(spelled) && !holds(withoutInvisible(spelled))) return covered;
  for (const shown of shownReadings(text)) {
    if (shown.text === text) continue;
    const cover = (from: number, to: number) => {
      covered ??= new Uint8Array(text.length);
      covered.fill(1, shown.start[from], shown.end[to - 1]);
    };
    for (const form of texts) {
      for (let at = shown.text.indexOf(form); at !== -1; at = shown.text.indexOf(form, at + 1))
        cover(at, at + form.length);
    }
    if (pieces === undefined) continue;
    for (let at = 0; at + pieces.size <= shown.text.length; at++) {
      if (pieces.pieces.has(shown.text.slice(at, at + pieces.size))) cover(at, at + pieces.size);
    }
  }
  return covered;
}

function holdsPiece(text: string, { size, pieces }: Pieces): boolean {
  for (let at = 0; at + size <= text.length; at++) if (pieces.has(text.slice(at, at + size))) return true;
  return false;
}

/** `text` with each run of characters `covered` flags replaced by one `mark`. */
export function replaceCovered(text: string, covered: Uint8Array, mark: string): string {
  let replaced = '';
  for (let at = 0; at < text.length; at++) {
    if (covered[at] === 0) replaced += text[at];
    else if (at === 0 || covered[at - 1] === 0) replaced += mark;
  }
  return replaced;
}
