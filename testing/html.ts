/**
 * Reading the pages under test as a browser would: tags and their attributes as a browser's
 * tokenizer reads them, and attribute values decoded. The forms are read in html-forms.ts.
 */
import { redactSecretFragments } from '../middleware/errors.ts';
import { GROUP_MARKS, isIpv4Address } from '../middleware/numbers/mask-number.ts';
import { decodeHtml, htmlReferences, readWith, withoutMarkup, type ReadText } from '../middleware/shown-text.ts';
import { maskEveryNumber } from './audit/number-mask.ts';

export { decodeHtml, htmlReferences } from '../middleware/shown-text.ts';

/** An attribute's name as a browser's tokenizer reads it: any first character but a space, `/` or `>`, then up to a space, `/`, `>` or `=`. */
const NAME = '[^\\s/>][^\\s/>=]*';

/**
 * A value as written after its `=`: double- or single-quoted (a page cut short ends it), or unquoted
 * up to a space or `>`; a quote is a quote only where the value starts (`value=it's` is `it's`).
 */
const WRITTEN_VALUE = `"[^"]*(?:"|$)|'[^']*(?:'|$)|[^\\s>]*`;

/**
 * An opening tag's attribute text (group 1) and its end, as a browser's tokenizer reads them: its
 * attributes one after another, so only a quoted value may hold a `>`; a page cut short ends it too.
 */
export const TAG_REST = `((?:[\\s/]+|${NAME}(?:\\s*=\\s*(?:${WRITTEN_VALUE}))?)*)(?:>|$)`;

/** An opening `<input>` tag to its end; its attribute text is group 1. */
const INPUT_TAG = new RegExp(`<input\\b${TAG_REST}`, 'gi');

/** One attribute as browsers read it: its name, then (group 2) its value as written, if it has one. */
const ATTRIBUTE = new RegExp(`(${NAME})(?:\\s*=\\s*(${WRITTEN_VALUE}))?`, 'g');

/** An attribute's value as written (quotes and all), decoded as a browser reads it. */
function attributeValue(written: string | undefined): string {
  const quote = written?.[0];
  if (written === undefined || (quote !== '"' && quote !== "'")) return decodeHtml(written ?? '');
  return decodeHtml(written.slice(1, written.length > 1 && written.endsWith(quote) ? -1 : undefined));
}

/** An attribute's decoded value in a tag's attribute text: the first of that name, read as a browser reads it. */
export function attribute(attributes: string, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [, written = '', value] of attributes.matchAll(ATTRIBUTE)) {
    if (written.toLowerCase() === wanted) return attributeValue(value);
  }
  return undefined;
}

/** The value of the first `<input>` named `name` in `html` ('' when it has none), if there is one. */
export function inputValue(html: string, name: string): string | undefined {
  for (const [, attrs = ''] of html.matchAll(INPUT_TAG)) {
    if (attribute(attrs, 'name') === name) return attribute(attrs, 'value') ?? '';
  }
  return undefined;
}

/** An opening `<meta>` tag to its end; its attribute text is group 1. */
const META_TAG = new RegExp(`<meta\\b${TAG_REST}`, 'gi');

/** The `content` of the page's first `<meta http-equiv="refresh">`, read as a browser reads it (any quoting, order or case). */
export function metaRefreshContent(html: string): string | undefined {
  for (const [, attributes = ''] of html.matchAll(META_TAG)) {
    if (attribute(attributes, 'http-equiv')?.trim().toLowerCase() === 'refresh')
      return attribute(attributes, 'content');
  }
  return undefined;
}

/** A meta tag's name that says it carries a CSRF token (`csrf-token`, `_csrf`, `xsrf-token`, ...). */
const TOKEN_META = /csrf|xsrf|token/i;

/**
 * `tag` (`<` and its `element` name, its `attributes` text, then `>` unless the page was cut short)
 * with the value of its attribute `name` shown as `…`.
 */
function withoutValueOf(tag: string, element: string, attributes: string, name: string): string {
  const start = element.length + 1;
  const kept = attributes.replace(ATTRIBUTE, (written, attribute: string) =>
    attribute.toLowerCase() === name ? `${name}="…"` : written,
  );
  return `${tag.slice(0, start)}${kept}${tag.slice(start + attributes.length)}`;
}

/**
 * The start of a page for an error message, with every hidden field's value left out, and the
 * content of a meta tag that carries a CSRF token: a handoff travels only in a request body, and
 * a CSRF token is no business of a test log either. A field is hidden however the app writes it
 * (quotes, order, case), as a browser reads it. Every phone number the page shows is masked as the
 * audit's report masks it (a page quoting the user's own number would put it in the log in full),
 * and every client secret a kit of this process was given is redacted, in any spelling.
 */
export function pageExcerpt(html: string, length: number): string {
  const masked = html
    .replace(INPUT_TAG, (tag, attributes: string) =>
      [...attributes.matchAll(ATTRIBUTE)].some(
        ([, name = '', value]) =>
          name.toLowerCase() === 'type' && attributeValue(value).trim().toLowerCase() === 'hidden',
      )
        ? withoutValueOf(tag, 'input', attributes, 'value')
        : tag,
    )
    .replace(META_TAG, (tag, attributes: string) =>
      TOKEN_META.test(attribute(attributes, 'name') ?? '') ? withoutValueOf(tag, 'meta', attributes, 'content') : tag,
    );
  // Redacted and masked before the cut, so a secret or a number the cut splits goes whole. A page
  // showing the client secret is the flaw the audit looks for: the test log must not copy it.
  // Redacted first: a secret's run of seven digits reads as a number, and masked it is no longer
  // whole, so the letters between its runs would stay.
  const redacted = redactSecretFragments(masked);
  // A secret split by tags (`<wbr>` in a long token, `<span>` groups, a `<br>` every few
  // characters) or across lines is whole to a reader, while each piece is too short to be told
  // apart from other text: such a page is not quoted. Read as a browser shows it, without its
  // markup (and the line breaks beside it, as the audit's leak.secret reads it), and without any space.
  if (showsSecretInPieces(redacted)) return SECRET_SPLIT_BY_TAGS;
  return maskEveryNumber(maskTagSplitNumbers(redacted)).slice(0, length);
}

/** Whether any reading of `html` with its tags and spaces left out holds a piece of a client secret. */
function showsSecretInPieces(html: string): boolean {
  const unmarked = withoutMarkup(html);
  const views = [shownTextOf(html).text, unmarked, unmarked.replace(/\s+/g, '')];
  return views.some((view) => redactSecretFragments(view) !== view);
}

/** What an excerpt says instead of a page showing a client secret split by tags or lines. */
const SECRET_SPLIT_BY_TAGS = '[not quoted: the page shows a client secret split by tags]';

/**
 * A comment, or a tag as a browser's tokenizer ends it (a quoted value may hold a `>`, a tag may
 * be any length): its name is group 2.
 */
const TAG = new RegExp(`<!--[\\s\\S]*?(?:-->|$)|<(/?)([a-zA-Z][^\\s/>]*)${TAG_REST}`, 'g');

/** Elements a line of text runs through: a number split by them still reads as one. */
const INLINE = new Set([
  ...['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i', 'ins', 'kbd'],
  ...['mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'wbr'],
]);

/** What a tag that is not inline reads as: no mark between a number's groups, so it ends a number. */
const BLOCK_BREAK = '\u0001';

/** A number as a reader sees it: seven digits or more, marks (spaces of any width too) between them. */
const SHOWN_NUMBER = new RegExp(`\\p{Nd}(?:[${GROUP_MARKS}]*\\p{Nd}){6,}`, 'gu');

/**
 * The page's text as a reader sees it (inline tags read as nothing, other tags as a break,
 * character references decoded), with where each of its characters is written.
 */
function shownTextOf(html: string): ReadText {
  const tags = [...html.matchAll(TAG)].map((found) => ({
    at: found.index,
    written: found[0],
    // A comment shows nothing; an inline element's tag neither.
    text: found[2] === undefined || INLINE.has(found[2].toLowerCase()) ? '' : BLOCK_BREAK,
  }));
  const inTag = (at: number) => tags.some((tag) => at >= tag.at && at < tag.at + tag.written.length);
  const references = htmlReferences(html).filter((reference) => !inTag(reference.at));
  return readWith(
    html,
    [...tags, ...references].sort((a, b) => a.at - b.at),
  );
}

/**
 * Each number a page shows split by inline tags or spelt with character references
 * (`<span>07400</span>&#xA0;<span>123456</span>`) masked as one: a reader sees it whole. The tags
 * around it stay, and those of other elements too (a number never runs through a form or a cell).
 */
function maskTagSplitNumbers(html: string): string {
  const shown = shownTextOf(html);
  let out = html;
  for (const found of [...shown.text.matchAll(SHOWN_NUMBER)].reverse()) {
    const start = shown.start[found.index] ?? 0;
    const end = shown.end[found.index + found[0].length - 1] ?? start;
    const written = html.slice(start, end);
    if (written === found[0] || isIpv4Address(found[0])) continue;
    const digits = found[0].replace(/\P{Nd}/gu, '');
    out = `${out.slice(0, start)}[a number ending ${digits.slice(-2)}]${out.slice(end)}`;
  }
  return out;
}
