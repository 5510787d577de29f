/**
 * Where the entered-number checks search for a typed number shown in full: every place of the
 * app's exchanges but the form it is typed in, in any spelling the report's masking reads.
 */
import { spelledText } from '../../middleware/shown-text.ts';
import { withoutForms } from '../html-forms.ts';
import { decodeHtml } from '../html.ts';
import type { KeptExchange } from './kept-bodies.ts';
import { anySpellingOf, asciiDigits } from './number-mask.ts';
import { digitsOf, ENTERED_NUMBER_FIELD, type AuditWorld } from './world.ts';

/**
 * Whether a text shows `phone`'s national digits, in any spelling the report's masking reads: in
 * the digits of any script too (Arabic-Indic, full-width), as the kit reads them, and as a page
 * shows them when its markup splits them (each group in an element of its own) or writes them as
 * character references (`&#48;&#55;…`, `&plus;44`): a browser renders the number in full. Digits
 * percent-encoded (`/call/%30%37…`) are the number in full too, in a URL, a header or a page's
 * text alike: an address bar, a link's text or a log shows them decoded at a glance.
 */
export function showsNumber(phone: string): (text: string) => boolean {
  const pattern = anySpellingOf(digitsOf(phone).slice(-10));
  return (text) => {
    const seen = text.replace(MARKUP, '');
    // Tags are read before references, as a browser does: a decoded `&lt;` opens no tag; a URL
    // written with references (`&#37;30`) is decoded as the browser follows it, references first.
    // Each view read once (most texts hold no tag, no reference): percent escapes only where one is.
    for (const view of new Set([text, seen, decodeHtml(text), decodeHtml(seen)])) {
      if (pattern.test(asciiDigits(view))) return true;
      if (view.includes('%') && pattern.test(asciiDigits(spelledText(view)))) return true;
    }
    return false;
  };
}

/** A tag or a comment of a page: what its reader never sees between the digits it shows. */
const MARKUP = /<[^>]*>/g;

/**
 * A page's body without its number forms (each form posting to a start path that submits the
 * typed-number field, wherever the page writes that field): the number may be typed, or shown back,
 * there and only there; the rest of that page is searched like any other.
 */
function outsideNumberForms(world: AuditWorld, body: string, pageUrl: string): string {
  const starts = world.options.actions.map((a) => world.startPath(a));
  // Read as a browser submits the form: its action resolved, its field inside it or joined with form=.
  return withoutForms(body, (form) => {
    const action = resolvedUrl(form.action, pageUrl);
    return (
      action?.origin === world.options.appOrigin &&
      starts.includes(action.pathname) &&
      form.entries.some(([name]) => name === ENTERED_NUMBER_FIELD)
    );
  });
}

/** `href` resolved against the page it is on, or undefined when it is no URL. */
function resolvedUrl(href: string, pageUrl: string): URL | undefined {
  try {
    return new URL(href, pageUrl);
  } catch {
    return undefined;
  }
}

/** Every place of the app's exchanges where a typed number must not be, with where it is. */
export function placesOf(world: AuditWorld, x: KeptExchange): { where: string; text: string }[] {
  const url = new URL(x.url);
  if (url.origin !== world.options.appOrigin) return [];
  const at = `${x.method} ${url.pathname}`;
  const isStart = x.method === 'POST' && world.options.actions.some((a) => world.startPath(a) === url.pathname);
  return [
    { where: `${at} (URL)`, text: x.url },
    ...Object.entries(x.requestHeaders).map(([n, v]) => ({ where: `${at} request header ${n}`, text: v })),
    ...Object.entries(x.responseHeaders).map(([n, v]) => ({ where: `${at} response header ${n}`, text: v })),
    // The start's body is where the number is typed; a number form may show it back, the rest of its page not.
    ...(isStart ? [] : [{ where: `${at} request body`, text: x.requestBody }]),
    // A body past the run's bound is said by the check, not counted as searched.
    ...(x.unkeptBody === undefined
      ? [{ where: `${at} response body (${x.status})`, text: outsideNumberForms(world, x.responseBody, x.url) }]
      : []),
  ];
}
