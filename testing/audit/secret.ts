/**
 * The client secret as it may be spelt where it leaks, and the scrubbing of everything the audit
 * reports: "The client secret appears only in the Authorization header", so the audit's own
 * evidence, report and output never quote it in any encoding either.
 */
import { secretSpellings, type SecretSpelling } from '../../middleware/secret-spellings.ts';
import {
  coverShown,
  decodeHtml,
  markupLeftOut,
  replaceCovered,
  spelledText,
  withoutInvisible,
  withoutMarkup,
  type Pieces,
} from '../../middleware/shown-text.ts';

/** One spelling of the secret: what it is called in evidence, and the text searched for. */
export type SecretForm = SecretSpelling;

/**
 * Every spelling searched for and scrubbed: the kit's own list (the one its redaction removes), with
 * the Basic credentials of `clientId`.
 */
export function secretForms(clientId: string, secret: string): SecretForm[] {
  return secretSpellings(secret, clientId);
}

/**
 * A handoff's spellings (the secret's), a part of each counting from half of it on: a log cutting a
 * handoff short keeps a single-use bearer credential whose missing rest may be guessed in its 120
 * seconds when little is missing. A shorter run is not told apart from what every handoff of a
 * service may share (a version, a signed token's header).
 */
export function handoffForms(handoff: string): SecretForm[] {
  return secretSpellings(handoff).map(({ name, text, partLength }) => ({
    name,
    text,
    partLength: Math.max(partLength ?? MIN_LEAKED_PART, Math.ceil(text.length / 2)),
  }));
}

/** The first spelling of the secret found in `text`, if any. */
export function findSecret(forms: readonly SecretForm[], text: string): SecretForm | undefined {
  return forms.find((form) => text.includes(form.text));
}

/**
 * A part of the secret this long, in a row, is a leak the leak check reports: a "hint" of its
 * first characters, or the secret split across lines. Shorter runs of a hex spelling would match
 * ordinary hex (a nonce, an ETag) by chance.
 */
export const MIN_LEAKED_PART = 12;

/** Where a window of the index stands in a spelling, and how long a run of that spelling counts as a part (0: whole only). */
interface Place {
  form: SecretForm;
  text: string;
  at: number;
  partLength: number;
}

/**
 * Every `size` characters of every spelling, by hash, with each place it stands in one: a text is
 * read once, whatever the number of spellings (a run's handoffs give thousands). `size` is at most
 * MIN_LEAKED_PART and no longer than the shortest spelling, so a whole spelling holds a window too;
 * `stride` is how far apart a text's look-ups may be and still land in the shortest whole spelling
 * or part that counts. `filter` flags the hashes held, so most look-ups end in one array read.
 */
interface SpellingIndex {
  size: number;
  stride: number;
  power: number;
  places: Map<number, Place[]>;
  filter: Uint8Array;
  shift: number;
}

/** The hash's multiplier: odd, with bits spread, so windows differing in one character differ in hash. */
const BASE = 0x01000193;

/** The hash of `size` characters of `text` from `from` (a polynomial, so the next one is rolled from it). */
function hashAt(text: string, from: number, size: number): number {
  let hash = 0;
  for (let i = from; i < from + size; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/** The hash of the window after the one at `from`, from `hash`, that one's (`power`: BASE to the `size` - 1). */
function rolled(hash: number, text: string, from: number, size: number, power: number): number {
  return (Math.imul(hash - Math.imul(text.charCodeAt(from), power), BASE) + text.charCodeAt(from + size)) | 0;
}

/** The filter's slot of `hash`: its top bits after a multiplicative mix (the low bits of a polynomial hash are the weakest). */
function slotOf(hash: number, shift: number): number {
  return Math.imul(hash, 0x9e3779b1) >>> shift;
}

const indexByForms = new WeakMap<readonly SecretForm[], SpellingIndex>();

function indexOf(forms: readonly SecretForm[]): SpellingIndex {
  let index = indexByForms.get(forms);
  if (index !== undefined) return index;
  // Not Math.min(...): a run's handoffs may give more spellings than a call takes arguments.
  const size = forms.reduce((least, form) => Math.min(least, form.text.length), MIN_LEAKED_PART);
  let power = 1;
  for (let i = 1; i < size; i++) power = Math.imul(power, BASE);
  const places = new Map<number, Place[]>();
  let shortest = Infinity;
  for (const form of forms) {
    const { text } = form;
    // A part of the Basic credentials may be the client id's alone (public); the base64 spellings
    // hold every part of them that encodes the secret.
    const partLength = form.name.startsWith('base64 as Basic credentials') ? 0 : partLengthOf(form);
    shortest = Math.min(shortest, text.length, partLength === 0 ? Infinity : partLength);
    let hash = hashAt(text, 0, size);
    for (let at = 0; at + size <= text.length; at++) {
      if (at > 0) hash = rolled(hash, text, at - 1, size, power);
      const place = { form, text, at, partLength };
      const known = places.get(hash);
      if (known === undefined) places.set(hash, [place]);
      else known.push(place);
    }
  }
  const bits = Math.min(24, Math.max(10, Math.ceil(Math.log2(places.size * 8 + 1))));
  const shift = 32 - bits;
  const filter = new Uint8Array(2 ** bits);
  for (const hash of places.keys()) filter[slotOf(hash, shift)] = 1;
  index = {
    size,
    stride: Number.isFinite(shortest) ? shortest - size + 1 : 1,
    power,
    places,
    filter,
    shift,
  };
  indexByForms.set(forms, index);
  return index;
}

/** How many characters in a row of a spelling count as a part of it. */
function partLengthOf(form: SecretForm): number {
  return Math.max(form.partLength ?? 0, MIN_LEAKED_PART);
}

/** How long the run of characters both `text` and the spelling hold is, around `text`'s `from` and the spelling's `at`. */
function runAround(text: string, from: number, { text: spelled, at }: Place): number {
  let before = 0;
  while (before < Math.min(from, at) && text[from - before - 1] === spelled[at - before - 1]) before++;
  let after = 0;
  while (from + after < text.length && text[from + after] === spelled[at + after]) after++;
  return before + after;
}

/** Whether a whole spelling, or (`parts`) a part of one that counts, stands at one of the places of `text`'s window at `from`. */
function placeAt(index: SpellingIndex, text: string, from: number, hash: number, parts: boolean): Place | undefined {
  if (index.filter[slotOf(hash, index.shift)] === 0) return undefined;
  // Another window with the same hash is told apart here: the characters are compared.
  for (const place of index.places.get(hash) ?? []) {
    if (from >= place.at && text.startsWith(place.text, from - place.at)) return place;
    if (parts && place.partLength > 0 && runAround(text, from, place) >= place.partLength) return place;
  }
  return undefined;
}

/** The first place of `text` (in its windows `stride` apart) where a whole spelling or (`parts`) a part that counts stands. */
function firstPlace(index: SpellingIndex, text: string, parts: boolean): Place | undefined {
  const { size, stride, power } = index;
  if (text.length < size || index.places.size === 0) return undefined;
  if (stride > 1) {
    // Windows this far apart are hashed each on its own rather than rolled through every character.
    for (let from = 0; from + size <= text.length; from += stride) {
      const place = placeAt(index, text, from, hashAt(text, from, size), parts);
      if (place !== undefined) return place;
    }
    return undefined;
  }
  let hash = hashAt(text, 0, size);
  for (let from = 0; ; from++) {
    const place = placeAt(index, text, from, hash, parts);
    if (place !== undefined) return place;
    if (from + size >= text.length) return undefined;
    hash = rolled(hash, text, from, size, power);
  }
}

/**
 * Which spelling of `forms` `text` holds: whole, or (`parts`) as MIN_LEAKED_PART characters in a
 * row of one, named so; as written, or as a browser shows it: its tags removed (a template that
 * cut it into elements each shorter than a part), its character references decoded (`&#x73;&#x6b;…`
 * renders as the secret), its percent escapes decoded (`%73%6B%5F…` is the secret in an address bar).
 */
export function secretSpellingIn(forms: readonly SecretForm[], text: string, parts: boolean): string | undefined {
  const searched = new Set<string>();
  for (const [view, how] of browserViews(text)) {
    if (searched.has(view)) continue;
    searched.add(view);
    const spelling = spellingAsWritten(forms, view, parts);
    if (spelling !== undefined) return `${spelling}${how}`;
  }
  return undefined;
}

/**
 * `text` as written, then as a browser shows it, each view with what its evidence adds: tags read
 * before references, as a browser does (a decoded `&lt;` opens no tag), and a URL written with
 * references (`&#37;73`) decoded as the browser follows it, references first.
 */
function browserViews(text: string): [string, string][] {
  const seen = withoutMarkup(text);
  const views: [string, string][] = [
    [text, ''],
    [seen, ", split by a page's tags"],
  ];
  if (text.includes('&')) {
    views.push([decodeHtml(text), ', written as character references']);
    views.push([decodeHtml(seen), ", split by a page's tags, written as character references"]);
  }
  // A reference may spell the escape (`&#37;73`): each view is read for one (a view without a `%`
  // spells itself, already listed).
  for (const [view, how] of [...views]) {
    if (view.includes('%')) views.push([spelledText(view), `${how}, percent-encoded`]);
  }
  // A template breaking long words (zero-width spaces, soft hyphens): its reader sees the value whole.
  for (const [view, how] of [...views]) {
    const visible = withoutInvisible(view);
    if (visible !== view) views.push([visible, `${how}, cut by characters a browser shows as nothing`]);
  }
  return views;
}

/**
 * The name of the spelling `text` holds whole (the first listed: the most common), else of the one
 * it holds a part of (`parts`). Only a text the index finds one in is searched for each spelling.
 */
function spellingAsWritten(forms: readonly SecretForm[], text: string, parts: boolean): string | undefined {
  const place = firstPlace(indexOf(forms), text, parts);
  if (place === undefined) return undefined;
  const whole = findSecret(forms, text);
  if (whole !== undefined) return whole.name;
  return `${place.partLength} characters or more of it, ${place.form.name}`;
}

const MARK = '[client secret]';

/** A fragment shorter than this is not told apart from ordinary text (the tail of a cut value too). */
const MIN_FRAGMENT = 8;

/** Every MIN_FRAGMENT characters of every spelling, worked out once per list (every evidence line is scrubbed). */
const piecesByForms = new WeakMap<readonly SecretForm[], Set<string>>();

function piecesOf(forms: readonly SecretForm[]): Set<string> {
  let pieces = piecesByForms.get(forms);
  if (pieces !== undefined) return pieces;
  pieces = new Set<string>();
  for (const form of forms) {
    for (let at = 0; at + MIN_FRAGMENT <= form.text.length; at++) pieces.add(form.text.slice(at, at + MIN_FRAGMENT));
  }
  piecesByForms.set(forms, pieces);
  return pieces;
}

/**
 * `text` with every spelling of the secret replaced, and any run of MIN_FRAGMENT characters or more
 * that is part of one: a value cut short (a page title, a header quoted in part) keeps a fragment
 * no whole spelling matches, wherever in the text the cut left it. The same as a browser shows the
 * text: a secret written as character references or with every character percent-encoded is
 * replaced as written.
 */
export function scrubSecret(forms: readonly SecretForm[], text: string): string {
  let out = text;
  for (const form of [...forms].sort((a, b) => b.text.length - a.text.length)) out = out.split(form.text).join(MARK);
  const pieces = piecesOf(forms);
  // Marks every character of a window that is a piece: overlapping windows join into one run.
  const covered = new Uint8Array(out.length);
  let any = false;
  for (let at = 0; at + MIN_FRAGMENT <= out.length; at++) {
    if (!pieces.has(out.slice(at, at + MIN_FRAGMENT))) continue;
    covered.fill(1, at, at + MIN_FRAGMENT);
    any = true;
  }
  return scrubShown(forms, any ? replaceCovered(out, covered, MARK) : out);
}

/**
 * `text` with what spells the secret (whole or MIN_FRAGMENT characters of it) as a browser shows it
 * replaced as written: its references and escapes decoded, and its tags left out (a template that
 * cut it into elements each shorter than a piece), as the leak search reads it.
 */
function scrubShown(forms: readonly SecretForm[], text: string): string {
  const texts = forms.map((form) => form.text);
  const pieces = { size: MIN_FRAGMENT, pieces: piecesOf(forms) };
  const covered = coverBetweenTags(text, texts, pieces, coverShown(text, texts, pieces));
  return covered === undefined ? text : replaceCovered(text, covered, MARK);
}

/** `covered` with where `text` writes what spells the secret once its tags are left out, read as written and as shown. */
function coverBetweenTags(
  text: string,
  texts: readonly string[],
  pieces: Pieces,
  covered: Uint8Array | undefined,
): Uint8Array | undefined {
  const read = markupLeftOut(text);
  if (read === undefined) return covered;
  const found = coverShown(read.text, texts, pieces) ?? new Uint8Array(read.text.length);
  let any = found.includes(1);
  const mark = (from: number, to: number) => {
    found.fill(1, from, to);
    any = true;
  };
  for (const form of texts) {
    for (let at = read.text.indexOf(form); at !== -1; at = read.text.indexOf(form, at + 1)) mark(at, at + form.length);
  }
  for (let at = 0; at + pieces.size <= read.text.length; at++) {
    if (pieces.pieces.has(read.text.slice(at, at + pieces.size))) mark(at, at + pieces.size);
  }
  if (!any) return covered;
  const placed = covered ?? new Uint8Array(text.length);
  for (let at = 0; at < read.text.length; at++) if (found[at] === 1) placed.fill(1, read.start[at], read.end[at]);
  return placed;
}
