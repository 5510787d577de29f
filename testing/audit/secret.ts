/**
 * The client secret as it may be spelt where it leaks, and the scrubbing of everything the audit
 * reports: "The client secret appears only in the Authorization header", so the audit's own
 * evidence, report and output never quote it in any encoding either.
 */
import { secretSpellings, type SecretSpelling } from '../../middleware/secret-spellings.ts';
import { coverShown, decodeHtml, replaceCovered, spelledText, withoutInvisible } from '../../middleware/shown-text.ts';

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

/** Where each MIN_LEAKED_PART characters of a spelling stand in it. */
interface PartPlace {
  form: SecretForm;
  at: number;
}

/**
 * Every MIN_LEAKED_PART characters of every spelling, with each place it stands in one; and `stride`,
 * how far apart a text's look-ups may be: a part that counts starts a look-up at each of its first
 * (its length - MIN_LEAKED_PART + 1) characters, so look-ups that far apart still land in the shortest.
 */
interface PartIndex {
  places: Map<string, PartPlace[]>;
  stride: number;
}

const partsByForms = new WeakMap<readonly SecretForm[], PartIndex>();

function partsOf(forms: readonly SecretForm[]): PartIndex {
  let parts = partsByForms.get(forms);
  if (parts !== undefined) return parts;
  const places = new Map<string, PartPlace[]>();
  // A part of the Basic credentials may be the client id's alone (public); the base64 spellings
  // hold every part of them that encodes the secret.
  const searched = forms.filter((f) => !f.name.startsWith('base64 as Basic credentials'));
  for (const form of searched) {
    for (let at = 0; at + MIN_LEAKED_PART <= form.text.length; at++) {
      const part = form.text.slice(at, at + MIN_LEAKED_PART);
      const known = places.get(part);
      if (known === undefined) places.set(part, [{ form, at }]);
      else known.push({ form, at });
    }
  }
  const shortest = Math.min(...searched.map(partLengthOf));
  parts = { places, stride: Number.isFinite(shortest) ? shortest - MIN_LEAKED_PART + 1 : 1 };
  partsByForms.set(forms, parts);
  return parts;
}

/** How many characters in a row of a spelling count as a part of it. */
function partLengthOf(form: SecretForm): number {
  return Math.max(form.partLength ?? 0, MIN_LEAKED_PART);
}

/** How long the run of characters both `text` and the spelling hold is, around `text`'s `from` and the spelling's `at`. */
function runAround(text: string, from: number, { form, at }: PartPlace): number {
  let before = 0;
  while (before < Math.min(from, at) && text[from - before - 1] === form.text[at - before - 1]) before++;
  let after = 0;
  while (from + after < text.length && text[from + after] === form.text[at + after]) after++;
  return before + after;
}

/**
 * The spelling `text` holds a part of in a row (or all of it), if any: MIN_LEAKED_PART characters,
 * or more where the spelling names its own `partLength` (one writing each byte long, a handoff's).
 */
export function findSecretPart(forms: readonly SecretForm[], text: string): SecretForm | undefined {
  const { places, stride } = partsOf(forms);
  for (let from = 0; from + MIN_LEAKED_PART <= text.length; from += stride) {
    for (const place of places.get(text.slice(from, from + MIN_LEAKED_PART)) ?? []) {
      if (runAround(text, from, place) >= partLengthOf(place.form)) return place.form;
    }
  }
  return undefined;
}

/** A tag or a comment, with the spaces and line breaks beside it: what a page's reader never sees. */
const MARKUP = /\s*<[^>]*>\s*/g;

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
  const seen = text.replace(MARKUP, '');
  const views: [string, string][] = [
    [text, ''],
    [seen, ", split by a page's tags"],
  ];
  if (text.includes('&')) {
    views.push([decodeHtml(text), ', written as character references']);
    views.push([decodeHtml(seen), ", split by a page's tags, written as character references"]);
  }
  if (text.includes('%')) {
    for (const [view, how] of [...views]) views.push([spelledText(view), `${how}, percent-encoded`]);
  }
  // A template breaking long words (zero-width spaces, soft hyphens): its reader sees the value whole.
  for (const [view, how] of [...views]) {
    const visible = withoutInvisible(view);
    if (visible !== view) views.push([visible, `${how}, cut by characters a browser shows as nothing`]);
  }
  return views;
}

function spellingAsWritten(forms: readonly SecretForm[], text: string, parts: boolean): string | undefined {
  const whole = findSecret(forms, text);
  if (whole !== undefined || !parts) return whole?.name;
  const part = findSecretPart(forms, text);
  return part === undefined ? undefined : `${partLengthOf(part)} characters or more of it, ${part.name}`;
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

/** `text` with what spells the secret (whole or MIN_FRAGMENT characters of it) as a browser shows it replaced as written. */
function scrubShown(forms: readonly SecretForm[], text: string): string {
  const texts = forms.map((form) => form.text);
  const covered = coverShown(text, texts, { size: MIN_FRAGMENT, pieces: piecesOf(forms) });
  return covered === undefined ? text : replaceCovered(text, covered, MARK);
}
