/**
 * What the app exposes, judged over every exchange of the run (plus a short tour of its own, so the
 * checks mean something when run alone): framing and caching headers on every kit page, and the
 * client secret and the handoffs nowhere but where they must travel.
 */
import { UnreachableError, withoutHandoffInput, type Answer, type Exchange } from './agent.ts';
import type { AuditCheck, Verdict } from './check.ts';
import { breather } from './breather.ts';
import { describeThrown } from './hooks.ts';
import { unkeptSaid, type KeptExchange, type UnkeptBody } from './kept-bodies.ts';
import { handoffForms, secretSpellingIn as spellingIn, type SecretForm } from './secret.ts';
import { confirmItsYouForm } from './start-grant.ts';
import { fetchSubresources, onOrigin } from './subresources.ts';
import type { AuditUser, AuditWorld } from './world.ts';

/**
 * One real flow (hosted page walked, success page followed with a browser's Referer) and a forged
 * landing, then the files the pages seen have the browser load (their scripts and stylesheets). The
 * tour stays on the app's origin: a Referer carrying session_id and state is never sent anywhere
 * else (the redirect checks judge a landing that leaves it).
 */
async function tour(world: AuditWorld): Promise<string[]> {
  const user = await world.signIn();
  // The pages the other checks saw load their files whatever the walk does: fetched even when it fails.
  const walking = walk(world, user);
  await walking.catch(() => {});
  const unread = await fetchSubresources(world, user.agent);
  await walking;
  return unread;
}

async function walk(world: AuditWorld, user: AuditUser): Promise<void> {
  const attempt = await world.start(user);
  const location = await world.walkHostedPage(user, attempt);
  if (world.resolve(location).origin !== world.options.appOrigin) return;
  const landing = await user.agent.request(location);
  const next = landing.location === null ? undefined : world.resolve(landing.location, landing.url);
  if (next !== undefined && next.origin === world.options.appOrigin) {
    await user.agent.request(next.href, { headers: { referer: landing.url } });
  }
  await world.land(user, 'session_id=unknown&state=unknown');
}

/** Each run's tour, resolving with the files the pages load that were not searched. */
const tours = new WeakMap<AuditWorld, Promise<string[]>>();

function toured(world: AuditWorld): Promise<string[]> {
  let done = tours.get(world);
  if (done === undefined) {
    done = tour(world);
    tours.set(world, done);
  }
  return done;
}

/**
 * The tour, for a check that judges everything the run recorded: when it cannot run, what the other
 * checks recorded is judged all the same (a leak they saw still fails the check). A host other than
 * the app that could not be reached leaves the check not run if nothing fails; the app failing the
 * tour fails it.
 */
async function tourThen(world: AuditWorld, verdict: Verdict): Promise<void> {
  try {
    for (const unread of await toured(world)) verdict.note(unread);
  } catch (error) {
    if (error instanceof UnreachableError && error.origin !== world.options.appOrigin) verdict.notRun = error.message;
    else verdict.expect(false, `the tour (a real flow through the hosted page) failed: ${describeThrown(error)}`);
    verdict.note('the tour did not finish: judged what the other checks recorded');
  }
}

/** Whether the exchange is a start: a POST to the start path of an action. */
function isStart(world: AuditWorld, x: Exchange): boolean {
  const url = new URL(x.url);
  const starts = world.options.actions.map((a) => world.startPath(a));
  return url.origin === world.options.appOrigin && x.method === 'POST' && starts.includes(url.pathname);
}

/** Whether the exchange is a landing: a GET of the returnUrl's path. */
function isLanding(world: AuditWorld, x: Exchange): boolean {
  const url = new URL(x.url);
  return url.origin === world.options.appOrigin && x.method === 'GET' && url.pathname === world.returnUrlPath();
}

/** The start-again URL the kit's handoff page sends a copy of itself shown again to (`var again = "…"`). */
const START_AGAIN = /\bvar again = ("(?:[^"\\\n]|\\.)*");/;

/** The path of the start-again page a start's handoff page names, if it names one on the app. */
function startAgainPath(world: AuditWorld, x: Exchange): string | undefined {
  const again = isStart(world, x) ? START_AGAIN.exec(x.responseBody)?.[1] : undefined;
  if (again === undefined) return undefined;
  try {
    return pathOnApp(world, JSON.parse(again) as string, x.url);
  } catch {
    return undefined;
  }
}

/** The path of the kit's step-up page a landing sends a kept form's confirmation to (its Location carries the `intent`). */
function stepUpPagePath(world: AuditWorld, x: Exchange): string | undefined {
  const location = isLanding(world, x) ? x.responseHeaders.location : undefined;
  const next = location === undefined ? undefined : onOrigin(location, x.url, world.options.appOrigin);
  if (next === undefined) return undefined;
  const url = new URL(next);
  return url.searchParams.has('intent') ? url.pathname : undefined;
}

/** The path `target` names, resolved against `base`, when it is on the app's origin. */
function pathOnApp(world: AuditWorld, target: string, base: string): string | undefined {
  const url = onOrigin(target, base, world.options.appOrigin);
  return url === undefined ? undefined : new URL(url).pathname;
}

/** The paths of the kit's other pages, as its own answers name them (an app may rename its routes). */
function kitPagePaths(world: AuditWorld): Set<string> {
  const paths = world.exchanges.flatMap((x) => [startAgainPath(world, x), stepUpPagePath(world, x)]);
  return new Set(paths.filter((path) => path !== undefined));
}

/** The exchange as the answer its browser got, for the page readers written for answers. */
function answerOf(x: Exchange): Answer {
  const { status, url, setCookies, responseHeaders: headers, responseBody: body } = x;
  return { status, url, setCookies, headers, body, location: headers.location ?? null };
}

/**
 * The answers of the kit's routes the run saw: its start, its landing, its start-again and step-up
 * pages (GET and POST), and the guard's "Confirm it's you" page, at whichever route it asks.
 */
function kitAnswers(world: AuditWorld): Exchange[] {
  const pages = kitPagePaths(world);
  const onKitPage = (x: Exchange) => {
    const url = new URL(x.url);
    return url.origin === world.options.appOrigin && pages.has(url.pathname);
  };
  return world.exchanges.filter(
    (x) => isStart(world, x) || isLanding(world, x) || onKitPage(x) || asksToConfirm(world, x),
  );
}

/** Whether the answer is the guard's "Confirm it's you" page (its form carries an `intent`: read only then). */
function asksToConfirm(world: AuditWorld, x: Exchange): boolean {
  if (!x.url.startsWith(world.options.appOrigin) || !x.responseBody.includes('intent')) return false;
  return confirmItsYouForm(world, answerOf(x)) !== undefined;
}

/**
 * The sources of the `frame-ancestors` directive of each of the answer's policies (several headers
 * join with ","): a policy's first one, as browsers enforce it (a later duplicate is dropped).
 */
function frameAncestors(x: Exchange): string[][] {
  const policies = (x.responseHeaders['content-security-policy'] ?? '').split(',');
  return policies.flatMap((policy) => {
    const first = policy
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .find(([name]) => name?.toLowerCase() === 'frame-ancestors');
    return first === undefined ? [] : [first.slice(1).map((source) => source.toLowerCase())];
  });
}

/**
 * Whether a browser refuses to frame the page: a policy's `frame-ancestors` allowing only 'none' or
 * 'self' does; any other frame-ancestors makes the browser ignore X-Frame-Options, which decides
 * only without one. X-Frame-Options' values (several lines join with ",") are a set, as HTML reads
 * them: one value refuses when it is DENY or SAMEORIGIN, several distinct ones when any of them is
 * DENY, SAMEORIGIN or ALLOWALL.
 */
function framed(x: Exchange): boolean {
  const directives = frameAncestors(x);
  if (directives.length > 0) {
    return directives.some((sources) => sources.every((source) => source === "'none'" || source === "'self'"));
  }
  const values = new Set(
    (x.responseHeaders['x-frame-options'] ?? '').split(',').map((value) => value.trim().toLowerCase()),
  );
  if (values.size > 1) return ['deny', 'sameorigin', 'allowall'].some((value) => values.has(value));
  return values.has('deny') || values.has('sameorigin');
}

/** What an answer says of framing, for evidence: its X-Frame-Options and its policies' frame-ancestors, as sent. */
function framingSaid(x: Exchange): string {
  const xfo = x.responseHeaders['x-frame-options'];
  const ancestors = frameAncestors(x).map((sources) => `frame-ancestors ${sources.join(' ')}`.trim());
  return [
    xfo === undefined ? 'no X-Frame-Options' : `X-Frame-Options: ${xfo}`,
    ancestors.length === 0 ? 'no frame-ancestors' : ancestors.join(', '),
  ].join(', ');
}

/**
 * Every place a value may be searched, and what the handoff search reads there instead when a
 * handoff travels in it: nothing of the form POST to verifyUrl, and the start answer without its
 * auto-submit form's `hx` value (a copy anywhere else in that page is a leak).
 */
/** Statuses a cache may keep without being told to (RFC 9110, 15.1: "heuristically cacheable"). */
const HEURISTICALLY_CACHEABLE_ERRORS = new Set([404, 405, 410, 414, 501]);

/**
 * An error answer no cache keeps: a status caches never store on their own, with nothing that
 * lets them (an app's own error handler, with `errors: 'next'`, need not say no-store). A success,
 * or an error marked public or given a lifetime, must say no-store.
 */
function unstorableError(x: Exchange): boolean {
  const cacheControl = (x.responseHeaders['cache-control'] ?? '').toLowerCase();
  return (
    x.status >= 400 &&
    !HEURISTICALLY_CACHEABLE_ERRORS.has(x.status) &&
    !/\b(?:public|max-age|s-maxage)\b/.test(cacheControl) &&
    x.responseHeaders.expires === undefined
  );
}

/**
 * The caching headers a CDN reads instead of Cache-Control (RFC 9213's CDN-Cache-Control, and the
 * CDNs' own): a page no-store to browsers is kept at the edge when one of these lets it.
 */
const CDN_CACHE_HEADERS = ['cdn-cache-control', 'surrogate-control', 'edge-control'];

/** A CDN's own targeted header (RFC 9213 names them `<cdn>-cdn-cache-control`: Cloudflare's, Vercel's, Netlify's, ...). */
const TARGETED_CDN_HEADER = /^[a-z0-9-]+-cdn-cache-control$/;

/** The CDN caching headers an answer carries, the listed ones first. */
function cdnCacheHeaders(headers: Readonly<Record<string, string>>): string[] {
  const targeted = Object.keys(headers).filter((name) => TARGETED_CDN_HEADER.test(name));
  return [...CDN_CACHE_HEADERS, ...targeted];
}

/**
 * The CDN caching header that lets a CDN keep the answer (`name: value`), if any: one not saying
 * no-store (nor private, nor Akamai's bypass-cache), or nginx's X-Accel-Expires not 0. An error caches never keep on their own may
 * have one that gives it no lifetime.
 */
function keptByCdn(x: Exchange): string | undefined {
  // nginx's proxy cache reads X-Accel-Expires over Cache-Control: seconds (0 keeps nothing) or `@` and a time.
  const accel = x.responseHeaders['x-accel-expires'];
  if (accel !== undefined && accel.trim() !== '0') return `x-accel-expires: ${accel}`;
  for (const name of cdnCacheHeaders(x.responseHeaders)) {
    const value = x.responseHeaders[name];
    if (value === undefined) continue;
    const directives = value.split(',').map((d) => d.trim().toLowerCase().split('=')[0]?.trim());
    if (directives.some((d) => d === 'no-store' || d === 'private' || d === 'bypass-cache')) continue;
    const lifetime = directives.some(
      (d) => d === 'public' || d === 'max-age' || d === 's-maxage' || d === 'cache-maxage',
    );
    if (!lifetime && x.status >= 400 && !HEURISTICALLY_CACHEABLE_ERRORS.has(x.status)) continue;
    return `${name}: ${value}`;
  }
  return undefined;
}

interface Place {
  where: string;
  text: string;
  handoffText?: string;
  /** A body past the run's bound: its text is gone, what was found in it as it was read is here. */
  unkept?: UnkeptBody;
}

function places(world: AuditWorld, x: KeptExchange): Place[] {
  const url = new URL(x.url);
  const at = `${x.method} ${url.origin === world.options.appOrigin ? '' : url.origin}${url.pathname}`;
  const isStartPage = isStart(world, x) && x.status === 200;
  const isRedeem =
    x.method === 'POST' && !x.url.startsWith(world.options.appOrigin) && /\/verify$/.test(new URL(x.url).pathname);
  return [
    { where: `${at} (URL)`, text: x.url },
    ...Object.entries(x.requestHeaders).map(([n, v]) => ({ where: `${at} request header ${n}`, text: v })),
    ...Object.entries(x.responseHeaders).map(([n, v]) => ({ where: `${at} response header ${n}`, text: v })),
    { where: `${at} request body`, text: x.requestBody, ...(isRedeem ? { handoffText: '' } : {}) },
    {
      where: `${at} response body`,
      text: x.responseBody,
      ...(isStartPage ? { handoffText: withoutHandoffInput(x.responseBody) } : {}),
      ...(x.unkeptBody === undefined ? {} : { unkept: x.unkeptBody }),
    },
  ];
}

/**
 * Searches every exchange and log line for `forms`, whole or a part of one (as long as each counts);
 * evidence says where (the exchange's place, the log line's number) and which spelling, never the
 * text around it. A body past the run's bound was searched for the client secret (`secret`) as it
 * was read; for anything else, the bodies not searched are said.
 */
async function searchAll(
  world: AuditWorld,
  verdict: Verdict,
  forms: SecretForm[],
  what: string,
  { handoff, secret }: { handoff: boolean; secret: boolean },
) {
  let searched = 0;
  const unsearched: UnkeptBody[] = [];
  const breathe = breather();
  for (const x of world.exchanges) {
    await breathe();
    for (const place of places(world, x)) {
      if (place.unkept !== undefined && !secret) {
        unsearched.push(place.unkept);
        continue;
      }
      searched += 1;
      const text = handoff ? (place.handoffText ?? place.text) : place.text;
      const hit = place.unkept === undefined ? spellingIn(forms, text, true) : place.unkept.secret;
      verdict.expect(hit === undefined, `${what} (${hit}) in ${place.where}`);
    }
  }
  const unsaid = unkeptSaid(unsearched, what);
  if (unsaid !== undefined) verdict.note(unsaid);
  const lines = await world.logLines();
  for (const [index, line] of lines.entries()) {
    await breathe();
    const hit = spellingIn(forms, line, true);
    verdict.expect(hit === undefined, `${what} (${hit}) in log line ${index + 1} of ${lines.length}`);
  }
  verdict.note(
    `${world.exchanges.length} exchanges (${searched} places) and ${lines.length} log lines searched${world.options.logs === undefined ? ' (no `logs` given)' : ''}`,
  );
}

export const exposureChecks: AuditCheck[] = [
  {
    id: 'headers.kit-pages',
    title:
      "Every answer of the kit's routes is no-store (an error no cache keeps aside), to browsers and to CDNs (CDN-Cache-Control, Surrogate-Control), and every page of them refuses framing",
    fix: "Let the kit's pages keep their headers: set nothing after the kit that drops Cache-Control: no-store or X-Frame-Options/frame-ancestors, nor a CDN-Cache-Control or Surrogate-Control that lets a CDN keep them (helmet's defaults are fine).",
    phase: 'last',
    async run(world, verdict) {
      await tourThen(world, verdict);
      const answers = kitAnswers(world);
      const pages = answers.filter((x) => (x.responseHeaders['content-type'] ?? '').includes('text/html'));
      const paths = [...new Set(answers.map((x) => `${x.method} ${new URL(x.url).pathname}`))];
      verdict.note(
        `${answers.length} answers of the kit's routes (${paths.join(', ')}), ${pages.length} of them pages`,
      );
      verdict.expect(pages.length > 0, 'no page of the kit was seen');
      const uncached = new Set(
        answers
          .filter((x) => !/no-store/.test(x.responseHeaders['cache-control'] ?? '') && !unstorableError(x))
          .map((x) => `${x.method} ${new URL(x.url).pathname} ${x.status}`),
      );
      const framable = new Map(
        pages
          .filter((x) => !framed(x))
          .map((x) => [`${x.method} ${new URL(x.url).pathname} ${x.status}`, framingSaid(x)]),
      );
      const atEdge = new Map(
        answers.flatMap((x) => {
          const header = keptByCdn(x);
          return header === undefined ? [] : [[`${x.method} ${new URL(x.url).pathname} ${x.status}`, header]];
        }),
      );
      for (const page of uncached) verdict.expect(false, `${page} is not Cache-Control: no-store`);
      for (const [page, header] of atEdge) verdict.expect(false, `${page} lets a CDN keep it (${header})`);
      for (const [page, said] of framable) verdict.expect(false, `${page} may be framed (${said})`);
    },
  },
  {
    id: 'leak.secret',
    title:
      'The client secret is in no URL, Referer, page, file a page loads (a script, a stylesheet), response header or log line, whole or any 12 characters of it in a row (also as a browser shows it: a page without its tags, character references and percent escapes decoded): as is, URL-encoded, HTML- or JSON-escaped (also every character as \\u), in hex or decimal bytes (a Buffer as JSON), or in base64 (also URL-encoded)',
    fix: "Keep the client secret on the server, in the kit's options only (from your secret store or environment); never render, log or link it.",
    phase: 'last',
    async run(world, verdict) {
      await tourThen(world, verdict);
      await searchAll(world, verdict, [...world.secretForms], 'the client secret', {
        handoff: false,
        secret: true,
      });
    },
  },
  {
    id: 'leak.handoff',
    title:
      "Each handoff is only in the start answer's auto-submit form and its POST to verifyUrl: no URL, link, Referer, other page, header or log line, whole or half of it or more in a row (a log cutting it short), in any spelling the client secret is searched in (URL-encoded, HTML- or JSON-escaped, hex, base64 at any offset of a longer text)",
    fix: "Let the kit's auto-submit page carry the handoff (it posts it in a form body); never log the start's answer, put the handoff in a link, or redirect with it.",
    phase: 'last',
    async run(world, verdict) {
      await tourThen(world, verdict);
      // As the secret: a log of response bodies in base64, or a link carrying it encoded, hands it on
      // too; and so does a log cutting it short, keeping half of it or more (handoffForms).
      const forms = [...world.handoffs].flatMap((h) => handoffForms(h));
      verdict.expect(forms.length > 0, 'no handoff was handed out');
      verdict.note(`${world.handoffs.size} handoffs searched for`);
      await searchAll(world, verdict, forms, 'a handoff', { handoff: true, secret: false });
    },
  },
];
