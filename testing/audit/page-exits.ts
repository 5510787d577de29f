/**
 * Where a page may send the browser besides a Location or a refresh: its scripts (a script element,
 * an event handler attribute, a `javascript:` URL), and the links and forms a script may follow or
 * submit for the user. The audit runs no script; a planted value written into one is a redirect
 * taken from a parameter all the same ("never redirect to a URL taken from a parameter").
 */
import { attribute, TAG_REST } from '../html.ts';

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

/**
 * What on an HTML page at `pageUrl` carries one of `planted` to where a browser goes from it: a
 * script, an event handler, or a link, form or frame leaving `origin` (the first found, said for
 * evidence), or undefined. A link on `origin` holding it in its query is no exit (a page keeping
 * its query in a language switch).
 */
export function plantedExit(
  html: string,
  contentType: string,
  pageUrl: string,
  origin: string,
  planted: readonly string[],
): string | undefined {
  if (!/text\/html/i.test(contentType)) return undefined;
  for (const token of html.matchAll(TOKEN)) {
    const name = token[1]?.toLowerCase();
    const attributes = token[2] ?? '';
    if (name === undefined) continue;
    // A script never closed holds the rest of the page as its text: nothing after it is read again.
    let restIsScript = false;
    if (name === 'script') {
      const start = (token.index ?? 0) + token[0].length;
      // Searched from the script's start: once through the page, not once per script.
      SCRIPT_END.lastIndex = start;
      const end = SCRIPT_END.exec(html)?.index;
      restIsScript = end === undefined;
      if (holds(unescapeScript(html.slice(start, end)), planted)) return 'a <script>';
    }
    for (const [, written = ''] of attributes.matchAll(ATTRIBUTE_NAME)) {
      const handler = written.toLowerCase();
      if (!handler.startsWith('on')) continue;
      if (holds(unescapeScript(attribute(attributes, handler) ?? ''), planted)) return `an ${handler} handler`;
    }
    for (const which of TARGETS[name] ?? []) {
      const target = attribute(attributes, which);
      if (target === undefined || !holds(target, planted)) continue;
      if (/^\s*javascript:/i.test(target) || leaves(target, pageUrl, origin)) {
        return `a <${name} ${which}>`;
      }
    }
    if (restIsScript) break;
  }
  return undefined;
}

/**
 * The page's event handler attributes (`<body onload="...">`, `<a onclick="...">`): each one's name
 * and its code, decoded as the browser runs it. A script element's text is skipped: a tag written
 * in a script's string is no element.
 */
export function handlersOf(html: string): { name: string; code: string }[] {
  const handlers: { name: string; code: string }[] = [];
  const tokens = new RegExp(TOKEN.source, 'g');
  for (let token = tokens.exec(html); token !== null; token = tokens.exec(html)) {
    if (token[1] === undefined) continue;
    const attributes = token[2] ?? '';
    for (const [, written = ''] of attributes.matchAll(ATTRIBUTE_NAME)) {
      const name = written.toLowerCase();
      if (name.startsWith('on')) handlers.push({ name, code: attribute(attributes, name) ?? '' });
    }
    if (token[1].toLowerCase() !== 'script') continue;
    SCRIPT_END.lastIndex = tokens.lastIndex;
    const end = SCRIPT_END.exec(html)?.index;
    if (end === undefined) break;
    tokens.lastIndex = end;
  }
  return handlers;
}

/** Whether script text (a file a page loads) carries one of `planted`, as a string literal may spell it. */
export function scriptCarries(script: string, planted: readonly string[]): boolean {
  return holds(unescapeScript(script), planted);
}
