/**
 * A redirect by a script that reads the URL of the page it runs in (or a parent's) and sends the
 * browser on by it (`location = new URLSearchParams(location.search).get('next')`): its text
 * carries no planted value, yet run at a URL carrying one it goes there. The audit runs no script,
 * so the script is read: one judged the same way whether the page is the top window or a frame, and
 * whether it is a script element, an event handler attribute (`<body onload="...">`) or a
 * `javascript:` URL (`<a href="javascript:...">`).
 */
import { handlersOf, javascriptUrlsOf } from './page-exits.ts';
import { inlineScriptsOf } from './subresources.ts';

/**
 * A script's read of a page's URL (its own, a parent's or the top's): its query or hash, or the URL
 * whole (parsed, or as text: `location.href` read, not set, `location.toString()`, `String(location)`).
 */
const READS_URL =
  /\blocation\s*\.\s*(?:search|hash)\b|\bdocument\s*\.\s*(?:URL|documentURI)\b|\bURL(?:SearchParams)?\s*\(\s*(?:(?:window|self|document|parent|top)\s*\.\s*)?location\b|\blocation\s*\.\s*href\b(?!\s*=(?!=))|\blocation\s*\.\s*toString\s*\(|\bString\s*\(\s*(?:(?:window|self|document|parent|top)\s*\.\s*)?location\s*\)/;

/** A read of the query as parameters (`new URLSearchParams(location.search)`, `new URL(location).searchParams`). */
const PARAMETERS_READ =
  /\bURLSearchParams\s*\(\s*(?:(?:window|self|document|parent|top)\s*\.\s*)?location\s*\.\s*search\s*\)|\bURL\s*\(\s*(?:(?:window|self|document|parent|top)\s*\.\s*)?location(?:\s*\.\s*href)?\s*\)\s*\.\s*searchParams\b/g;

/**
 * A window sent somewhere: a location set, assigned or replaced, a window opened (`open(...)` is
 * `window.open`), or the Navigation API's `navigation.navigate(...)`; what follows is its target.
 */
const NAVIGATES =
  /\blocation\s*(?:\.\s*href\s*)?=(?!=)|\blocation\s*\.\s*(?:assign|replace)\s*\(|(?:\b(?:window|self|top|parent|globalThis)\s*\.\s*|(?<![.\w$]))open\s*\(|\bnavigation\s*\.\s*navigate\s*\(/g;

/** A target written whole as one string literal (`'/help'`): a fixed place, not one read from a URL. */
const FIXED_TARGET = /^\s*(?:(["'])[^"'\\\n]*\1|`[^`$\\]*`)\s*(?:[;,)}\n]|$)/;

/** A parameter read by a literal name (group 2): `.get('lang')`, `.getAll("tab")`, `.has('x')`. */
const NAMED_READ = /\.\s*(?:get|getAll|has)\s*\(\s*(["'`])([^"'`\\\n]{1,100})\1\s*\)/g;

/** A parameter read by a name the text does not spell (`.get(name)`). */
const UNNAMED_READ = /\.\s*(?:get|getAll)\s*\(\s*(?!(["'`])[^"'`\\\n]{1,100}\1\s*\))/;

/** A read by a literal name right where it starts: `.get('lang')`. */
const NAMED_HERE = /^\s*\.\s*(?:get|getAll|has)\s*\(\s*(["'`])[^"'`\\\n]{1,100}\1\s*\)/;

/** The name a parameters read is kept in, at the end of what precedes it (`const q = new `). */
const KEPT_IN = /(?:^|[^.\w$])([A-Za-z_$][\w$]*)\s*=\s*new\s+$/;

/** Whether every use of `name` (a spread too, not a property of that name) but its declaration reads one parameter by a literal name. */
function usedOnlyByName(script: string, name: string): boolean {
  const uses = [
    ...script.matchAll(new RegExp(`(?<![\\w$])(?<!(?:^|[^.])\\.)${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g')),
  ];
  return uses.every((use) => {
    const after = script.slice((use.index ?? 0) + use[0].length);
    return NAMED_HERE.test(after) || /^\s*=(?!=)/.test(after);
  });
}

/**
 * Whether each read of the query as parameters is read only by names the text spells, at once or
 * through the name it is kept in: one taken whole (`Object.fromEntries(...)`, iterated, spread)
 * reads every parameter, whatever other reads name.
 */
function parametersReadByName(script: string): boolean {
  return [...script.matchAll(PARAMETERS_READ)].every((match) => {
    const at = match.index ?? 0;
    if (NAMED_HERE.test(script.slice(at + match[0].length))) return true;
    const kept = KEPT_IN.exec(script.slice(Math.max(0, at - 200), at))?.[1];
    return kept !== undefined && usedOnlyByName(script, kept);
  });
}

/**
 * A target whose text starts with its origin written out: a literal holding a host ended by `/`,
 * `?` or `#` (a share link, `'https://twitter.com/intent/tweet?url=' + ...`), or a path beyond its
 * first slash (`'/search?q=' + ...`). What follows cannot move it to another site.
 */
const FIXED_ORIGIN = /^\s*(["'`])(?:https?:\/\/[^\s"'`\\/?#@$]+[/?#]|\/[^\s"'`\\/$])/i;

/** A target that is a name alone (`open(link, ...)`): group 1. */
const NAMED_TARGET = /^\s*([A-Za-z_$][\w$]*)\s*(?:[;,)}\n]|$)/;

/** Whether `target` (what follows a navigation) is a fixed string or starts with its origin written out. */
function fixedTarget(target: string): boolean {
  return FIXED_TARGET.test(target) || FIXED_ORIGIN.test(target);
}

/**
 * Whether `name` is given a value in `script` (`var link = ...`, `link = ...`), every time as a
 * fixed target: a share link built into a variable (`var link = 'https://twitter.com/...?url=' +
 * ...`). A name never given one here (a function's parameter), or added to, is not.
 */
function alwaysFixed(script: string, name: string): boolean {
  const escaped = name.replace(/\$/g, '\\$');
  // Added to (`link += ...`, `link ||= ...`): an empty string first would then take anything.
  if (new RegExp(`(?<![\\w$.])${escaped}\\s*(?:[-+*/%&|^]|\\*\\*|<<|>>>?|&&|\\|\\||\\?\\?)=`).test(script))
    return false;
  const assignments = [...script.matchAll(new RegExp(`(?<![\\w$.])${escaped}\\s*=(?![=>])`, 'g'))];
  return (
    assignments.length > 0 &&
    assignments.every((found) => fixedTarget(script.slice((found.index ?? 0) + found[0].length)))
  );
}

/** Whether the script sends a window on to anything but a fixed string or its origin written first. */
function navigatesByValue(script: string): boolean {
  return [...script.matchAll(NAVIGATES)].some((match) => {
    const target = script.slice((match.index ?? 0) + match[0].length);
    if (fixedTarget(target)) return false;
    const name = NAMED_TARGET.exec(target)?.[1];
    return name === undefined || !alwaysFixed(script, name);
  });
}

/** Whether `text` holds one of `planted` (case aside). */
function holds(text: string, planted: readonly string[]): boolean {
  const lower = text.toLowerCase();
  return planted.some((value) => lower.includes(value.toLowerCase()));
}

/**
 * The names of the query and hash parameters of `url` whose value carries one of `planted`, once
 * decoded as a script reads them; `undefined` when the query or hash carries one outside any value
 * (or cannot be read as parameters), so only a script reading no URL at all is clear of it.
 */
function plantedNames(url: string, planted: readonly string[]): Set<string> | undefined {
  const names = new Set<string>();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return holds(url, planted) ? undefined : names;
  }
  for (const part of [parsed.search, parsed.hash]) {
    const params = new URLSearchParams(part.replace(/^[?#]/, ''));
    for (const [name, value] of params) if (holds(value, planted)) names.add(name);
    if ([...params.keys()].some((name) => holds(name, planted))) return undefined;
  }
  return names;
}

/**
 * Which of `names` `script` reads, said for evidence: one it spells as a string (`.get('next')`,
 * `'next='`), or, by a read that does not say which parameter it takes (the query or hash as
 * text, the URL whole, `.get(name)`, parameters read but none by name), any. A script reading
 * parameters only by names it spells (`.get('lang')`) is judged by those names: undefined.
 */
function namedRead(script: string, names: ReadonlySet<string>): string | undefined {
  const spelt = new Set([...script.matchAll(NAMED_READ)].map((match) => match[2] ?? ''));
  const unnamed =
    spelt.size === 0 ||
    UNNAMED_READ.test(script) ||
    READS_URL.test(script.replace(PARAMETERS_READ, '')) ||
    !parametersReadByName(script);
  if (unnamed) return 'read without naming a parameter';
  const quoted = (name: string) =>
    new RegExp(`["'\`][?&#]?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}=?["'\`]`).test(script);
  const name = [...names].find((planted) => spelt.has(planted) || quoted(planted));
  return name === undefined ? undefined : `its parameter ${name}`;
}

/** A window's location, named through a window or the global object, or alone. */
const LOCATION = String.raw`(?:(?:window|self|document|parent|top|globalThis)\s*\??\.\s*)?location\b`;

/** A location kept under another name (`const loc = window.location;`): the name is group 1. */
const ALIASED = new RegExp(String.raw`(?<![\w$.])([A-Za-z_$][\w$]*)\s*=(?![=>])\s*${LOCATION}(?!\s*(?:\??\.|\[))`, 'g');

/** Parts of a location taken apart (`const { search, hash: h } = window.location`): the pattern is group 1. */
const DESTRUCTURED = new RegExp(String.raw`\{([^{}]{1,300})\}\s*=(?![=>])\s*${LOCATION}`, 'g');

/** One part of such a pattern: the property (group 1), and the name it is kept in (group 2) when another. */
const PART = /^\s*([A-Za-z_$][\w$]*)\s*(?::\s*([A-Za-z_$][\w$]*))?\s*(?:=.*)?$/s;

/** The rest of such a pattern (`...rest`): the name is group 1. */
const REST = /^\s*\.\.\.\s*([A-Za-z_$][\w$]*)\s*$/;

/** A location's part read by a literal in brackets (`location['search']`) or optionally (`location?.search`). */
const SPELT_OTHERWISE = /\blocation\s*(?:\[\s*(["'`])(search|hash|href)\1\s*\]|\?\.\s*(search|hash|href)\b)/g;

/** `script` with each whole-word use of a name in `renamed` written as what it stands for. */
function renamedIn(script: string, renamed: ReadonlyMap<string, string>): string {
  let written = script;
  for (const [name, part] of renamed) {
    written = written.replace(new RegExp(`(?<![\\w$.])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g'), part);
  }
  return written;
}

/**
 * The script with each part of a location spelt `location.search` (or `.hash`, `.href`), however
 * it was read: through another name the location was kept in, taken apart into names, in brackets
 * or optionally. A read of the query is then judged by the parameters it names whichever way it was
 * written; a rest taken apart (`...rest`) is a read of the URL whole.
 */
function withLocationPartsSpelt(script: string): string {
  const aliases = new Map<string, string>();
  let spelt = script.replace(ALIASED, (_, name: string) => {
    aliases.set(name, 'location');
    return 'void 0';
  });
  spelt = renamedIn(spelt, aliases);
  spelt = spelt.replace(SPELT_OTHERWISE, (_, _quote, bracketed, optional) => `location.${bracketed ?? optional}`);
  const parts = new Map<string, string>();
  spelt = spelt.replace(DESTRUCTURED, (_, pattern: string) => {
    for (const entry of pattern.split(',')) {
      const rest = REST.exec(entry)?.[1];
      if (rest !== undefined) parts.set(rest, 'String(location)');
      const [, property, name] = PART.exec(entry) ?? [];
      if (property === 'search' || property === 'hash' || property === 'href') {
        parts.set(name ?? property, `location.${property}`);
      }
    }
    return 'void 0';
  });
  return renamedIn(spelt, parts);
}

/**
 * What `script`, run in a page at the first of `urls` (its parents' after it), reads to send the
 * browser on to a planted value, said for evidence: it reads a URL, sends a window on to something
 * other than a fixed string, and one of `urls` carries one of `planted` where the script reads.
 */
export function plantedUrlRead(
  written: string,
  urls: readonly string[],
  planted: readonly string[],
): string | undefined {
  const script = withLocationPartsSpelt(written);
  if (!READS_URL.test(script) || !navigatesByValue(script)) return undefined;
  for (const url of urls) {
    const names = plantedNames(url, planted);
    if (names === undefined) return 'read as text: the planted value is in no parameter';
    const read = names.size > 0 ? namedRead(script, names) : undefined;
    if (read !== undefined) return read;
  }
  return undefined;
}

/** The code an HTML page runs of itself: its inline scripts, its event handler attributes' code and its `javascript:` URLs'. */
function inlineCodeOf(html: string): { by: string; code: string }[] {
  return [
    ...inlineScriptsOf(html).map((code) => ({ by: 'a <script>', code })),
    ...handlersOf(html).map(({ name, code }) => ({ by: `an ${name} handler`, code })),
    ...javascriptUrlsOf(html).map(({ where, code }) => ({ by: `a javascript: URL in ${where}`, code })),
  ];
}

/**
 * What of the HTML page `html`, run at `urls` (its own first), reads so (the first found): which
 * inline code (`a <script>`, `an onload handler`, `a javascript: URL in <a href>`), and what it reads.
 */
export function pagePlantedUrlRead(
  html: string,
  urls: readonly string[],
  planted: readonly string[],
): { by: string; read: string } | undefined {
  for (const { by, code } of inlineCodeOf(html)) {
    const read = plantedUrlRead(code, urls, planted);
    if (read !== undefined) return { by, read };
  }
  return undefined;
}
