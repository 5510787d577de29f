/**
 * Where a page may send the browser besides a Location or a refresh: its scripts (a script element,
 * an event handler attribute, a `javascript:` URL), and the links and forms a script may follow or
 * submit for the user. The audit runs no script; a planted value written into one is a redirect
 * taken from a parameter all the same ("never redirect to a URL taken from a parameter").
 */
import { attribute, decodeHtml, TAG_REST } from '../html.ts';

/** A comment (skipped), or a tag: group 1 its name, group 2 its attribute text. */
const TOKEN = new RegExp(`<!--[\\s\\S]*?(?:-->|$)|<([A-Za-z][^\\s/>]*)${TAG_REST}`, 'g');

/** Where a script element's text ends. */
const SCRIPT_END = /<\/script/gi;

/** One attribute's name (group 1): event handlers are the names starting with `on`. */
const ATTRIBUTE_NAME = /(?:^|[\s/])([^\s/>=]+)\s*(?==|[\s/>]|$)/g;

/** The attributes that name where a link, a form or a frame goes, by element. */
const TARGETS: Readonly<Record<string, readonly string[]>> = {
  a: ['href'],
  area: ['href'],
  form: ['action'],
  button: ['formaction'],
  input: ['formaction'],
  iframe: ['src'],
  frame: ['src'],
};

/**
 * Script text as a string literal in it spells it: `\/`, `\\`, `\xHH` and `\uHHHH` read once
 * (`JSON.stringify` and template escapers write a URL so).
 */
function unescapeScript(text: string): string {
  return text.replace(
    /\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([\\/'"]))/g,
    (_all, u?: string, x?: string, c?: string) =>
      u !== undefined || x !== undefined ? String.fromCharCode(Number.parseInt(u ?? x ?? '', 16)) : (c ?? ''),
  );
}

/** Whether `text` holds one of `planted` (case aside). */
function holds(text: string, planted: readonly string[]): boolean {
  const lower = text.toLowerCase();
  return planted.some((value) => lower.includes(value.toLowerCase()));
}

/** Whether `target` leaves `origin` once resolved against `pageUrl` (a `javascript:` URL does; no URL does not). */
function leaves(target: string, pageUrl: string, origin: string): boolean {
  try {
    return new URL(target, pageUrl).origin !== origin;
  } catch {
    return false;
  }
}

/** One opening tag of a page: its name (lower case), its attribute text, and a script element's text. */
interface Tag {
  name: string;
  attributes: string;
  script?: string;
}

/**
 * The page's tags in order, as a browser's tokenizer reads them: a script element's text is text
 * (a tag written in a script's string is no element), and a script never closed holds the rest of
 * the page. Each script's end is searched from its start: once through the page, not once per script.
 */
function* tagsOf(html: string): Generator<Tag> {
  const tokens = new RegExp(TOKEN.source, 'g');
  for (let token = tokens.exec(html); token !== null; token = tokens.exec(html)) {
    const name = token[1]?.toLowerCase();
    if (name === undefined) continue;
    const attributes = token[2] ?? '';
    if (name !== 'script') {
      yield { name, attributes };
      continue;
    }
    SCRIPT_END.lastIndex = tokens.lastIndex;
    const end = SCRIPT_END.exec(html)?.index;
    yield { name, attributes, script: html.slice(tokens.lastIndex, end) };
    if (end === undefined) return;
    tokens.lastIndex = end;
  }
}

/** One tag's event handler attributes (`onload`, `onclick`): each one's name and its code, decoded. */
function handlersIn(attributes: string): { name: string; code: string }[] {
  return [...attributes.matchAll(ATTRIBUTE_NAME)]
    .map(([, written = '']) => written.toLowerCase())
    .filter((name) => name.startsWith('on'))
    .map((name) => ({ name, code: attribute(attributes, name) ?? '' }));
}

/** Runs of percent-encoded bytes. */
const PERCENT_ENCODED = /(?:%[0-9a-fA-F]{2})+/g;

/**
 * The code a `javascript:` URL runs (its decoded attribute value), as the browser reads it: the URL
 * parsed (tabs and newlines dropped), then percent-decoded as UTF-8; undefined for any other URL.
 */
function javascriptCode(target: string): string | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'javascript:') return undefined;
  return url.href
    .slice('javascript:'.length)
    .replace(PERCENT_ENCODED, (run) =>
      new TextDecoder().decode(Uint8Array.from(run.slice(1).split('%'), (hex) => Number.parseInt(hex, 16))),
    );
}

/** One tag's links, form targets and frame sources (`<a href>`) and where each goes, decoded. */
function targetsIn(tag: Tag): { where: string; target: string }[] {
  return (TARGETS[tag.name] ?? []).flatMap((which) => {
    const target = attribute(tag.attributes, which);
    return target === undefined ? [] : [{ where: `<${tag.name} ${which}>`, target }];
  });
}

/**
 * What on an HTML page at `pageUrl` carries one of `planted` to where a browser goes from it: a
 * script, an event handler, a `javascript:` URL (its code decoded as the browser runs it), or a
 * link, form or frame leaving `origin` (the first found, said for evidence), or undefined. A link
 * on `origin` holding it in its query is no exit (a page keeping its query in a language switch).
 */
export function plantedExit(
  html: string,
  contentType: string,
  pageUrl: string,
  origin: string,
  planted: readonly string[],
): string | undefined {
  if (!/text\/html/i.test(contentType)) return undefined;
  const carries = (code: string) => holds(unescapeScript(code), planted);
  for (const tag of tagsOf(html)) {
    // A script may write its strings into the page as HTML (innerHTML, document.write), entities decoded.
    const script = tag.script ?? '';
    if (carries(script) || holds(decodeHtml(script), planted)) return 'a <script>';
    const handler = handlersIn(tag.attributes).find(({ code }) => carries(code));
    if (handler !== undefined) return `an ${handler.name} handler`;
    const exit = targetsIn(tag).find(({ target }) => {
      const code = javascriptCode(target);
      return (holds(target, planted) && leaves(target, pageUrl, origin)) || (code !== undefined && carries(code));
    });
    if (exit !== undefined) return `a ${exit.where}`;
  }
  return undefined;
}

/**
 * The page's event handler attributes (`<body onload="...">`, `<a onclick="...">`): each one's name
 * and its code, decoded as the browser runs it.
 */
export function handlersOf(html: string): { name: string; code: string }[] {
  return [...tagsOf(html)].flatMap((tag) => handlersIn(tag.attributes));
}

/**
 * The page's `javascript:` URLs in a link, a form's or button's target or a frame's source
 * (`<a href="javascript:...">`): where each is (`<a href>`) and the code it runs, decoded as the
 * browser runs it.
 */
export function javascriptUrlsOf(html: string): { where: string; code: string }[] {
  return [...tagsOf(html)].flatMap((tag) =>
    targetsIn(tag).flatMap(({ where, target }) => {
      const code = javascriptCode(target);
      return code === undefined ? [] : [{ where, code }];
    }),
  );
}

/** Whether script text (a file a page loads) carries one of `planted`, as a string literal may spell it. */
export function scriptCarries(script: string, planted: readonly string[]): boolean {
  return holds(unescapeScript(script), planted);
}
