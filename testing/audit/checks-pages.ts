/**
 * The pages a landing leads to: success pages are where apps add "just in case" grants. Every page
 * the owner's landing sent the browser to is requested again, as is, and with the session id of an
 * unknown attempt, a pending one, a failed one and another user's (in its query, and in its path
 * where the path names the attempt); and so is every form of those pages carrying the attempt's
 * session id or state, in a field or in its address (a script submits it). Then the owner lands
 * its own pending and failed attempts and opens those pages again (a success page may grant what
 * the landing last saw, kept in the session): no effect may follow.
 */
import { formsIn } from '../html-forms.ts';
import type { Answer } from './agent.ts';
import { describeAnswer, MAX_HOPS, randomState, type AuditCheck, type Verdict } from './check.ts';
import { nextTarget } from './checks-redirect.ts';
import type { AuditAction } from './options.ts';
import type { AuditUser, AuditWorld, StartedAttempt } from './world.ts';

/** The pages a landing answer sends its browser to (by a redirect or a refresh), followed on the app's origin. */
export async function pagesAfter(world: AuditWorld, user: AuditUser, landing: Answer): Promise<URL[]> {
  return (await answersAfter(world, user, landing)).map((answer) => new URL(answer.url));
}

/** What each page a landing answer sends its browser to answered, followed on the app's origin. */
async function answersAfter(world: AuditWorld, user: AuditUser, landing: Answer): Promise<Answer[]> {
  const answers: Answer[] = [];
  let answer = landing;
  for (let hop = 0, target = nextTarget(answer); hop < MAX_HOPS && target !== undefined; hop++) {
    const next = world.resolve(target, answer.url);
    if (next.origin !== world.options.appOrigin) break;
    answer = await user.agent.request(next.href, { headers: { referer: answer.url } });
    answers.push(answer);
    target = nextTarget(answer);
  }
  return answers;
}

/** The most forms of the pages after a landing sent again. */
const MOST_FORMS = 3;

/** A form of a page after the landing, on the app's origin, carrying the landed attempt's session id or state. */
interface AttemptForm {
  method: string;
  target: URL;
  entries: [string, string][];
}

function attemptForms(world: AuditWorld, answers: readonly Answer[], landed: StartedAttempt): AttemptForm[] {
  const forms: AttemptForm[] = [];
  for (const answer of answers) {
    if (!/text\/html/i.test(answer.headers['content-type'] ?? '')) continue;
    for (const form of formsIn(answer.body)) {
      if (form.method === 'dialog') continue;
      let target: URL;
      try {
        target = world.resolve(form.action === '' ? answer.url : form.action, answer.url);
      } catch {
        continue;
      }
      // The attempt in a field, or in the form's own address (`action="/claim/ses_…"`).
      const inFields = form.entries.some(([, value]) => value === landed.sessionId || value === landed.state);
      const inAction = withIds(target, landed, `${landed.sessionId}-`, `${landed.state}-`).href !== target.href;
      if (!inFields && !inAction) continue;
      const entries = form.entries.map(([name, value]): [string, string] => [name, value]);
      if (target.origin === world.options.appOrigin) forms.push({ method: form.method, target, entries });
    }
  }
  return forms.slice(0, MOST_FORMS);
}

/** Sends `form` as a browser submits it, the landed attempt's session id and state in it replaced by `id` and `state`. */
function submitWith(
  world: AuditWorld,
  user: AuditUser,
  form: AttemptForm,
  landed: StartedAttempt,
  id: string,
  state: string | undefined,
): Promise<Answer> {
  const entries = form.entries.map(([name, value]): [string, string] => [
    name,
    value === landed.sessionId ? id : value === landed.state && state !== undefined ? state : value,
  ]);
  const body = new URLSearchParams(entries).toString();
  const target = withIds(form.target, landed, id, state);
  if (form.method !== 'post') return user.agent.request(`${target.origin}${target.pathname}?${body}`);
  return user.agent.request(target.href, {
    method: 'POST',
    headers: { ...world.sameOrigin(), 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
}

/**
 * `url` with the landed attempt's session id and state, where a part of its path or a value of its
 * query is one (`/done/ses_…`, `?id=ses_…`), replaced by `id` and `state` (its state kept when
 * `state` is undefined).
 */
function withIds(url: URL, landed: StartedAttempt, id: string, state: string | undefined): URL {
  const swapped = (part: string) => {
    const read = decodedPart(part);
    if (read === landed.sessionId) return encodeURIComponent(id);
    if (read === landed.state && state !== undefined) return encodeURIComponent(state);
    return part;
  };
  const out = new URL(url);
  out.pathname = url.pathname.split('/').map(swapped).join('/');
  for (const [name, value] of url.searchParams) {
    if (value === landed.sessionId) out.searchParams.set(name, id);
    else if (value === landed.state && state !== undefined) out.searchParams.set(name, state);
  }
  return out;
}

/** A part of a path as it reads (percent escapes decoded), or as written when one is malformed. */
function decodedPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * The same page with other values: each of its query's parameters, and `session_id` (with `state`),
 * set to `id`; and the page whose path names the landed attempt (`/done/ses_…`) naming `id` instead.
 */
function variants(page: URL, landed: StartedAttempt, id: string, state: string | undefined): URL[] {
  const out: URL[] = [];
  const inPath = withIds(new URL(page.pathname, page), landed, id, state);
  if (inPath.pathname !== page.pathname) {
    const url = new URL(page);
    url.pathname = inPath.pathname;
    out.push(url);
  }
  for (const name of new Set(page.searchParams.keys())) {
    const url = new URL(page);
    url.searchParams.set(name, id);
    out.push(url);
  }
  const url = new URL(page);
  url.searchParams.set('session_id', id);
  if (state !== undefined) url.searchParams.set('state', state);
  out.push(url);
  return out;
}

/**
 * Lands the owner's own unverified attempt by its true return link, follows the landing as the
 * browser does, then opens the pages after the verified landing again in the same browser: a
 * success page may grant "just in case" the attempt the landing last saw, kept in the user's
 * session and named nowhere in its URL. Returns how many requests were made.
 */
async function landThenReopenPages(
  world: AuditWorld,
  owner: AuditUser,
  attempt: StartedAttempt,
  pages: readonly URL[],
): Promise<number> {
  const landing = await world.landOn(owner, attempt);
  const followed = await answersAfter(world, owner, landing);
  for (const page of pages) await owner.agent.request(page.href);
  return 1 + followed.length + pages.length;
}

/** Expects each attempt's effects; `later` ones (never verified, or landed) are counted again once the run is over. */
async function expectEffects(
  world: AuditWorld,
  verdict: Verdict,
  prefix: string,
  expected: [string, string, number, 'later'?][],
) {
  for (const [label, sessionId, want, later] of expected) {
    const count = await world.effects(sessionId);
    const what = `${prefix}the ${label} attempt has ${count} effect(s) after its pages were requested (expected ${want})`;
    verdict.expect(count === want, what);
    if (later !== undefined)
      verdict.countAgainLater(sessionId, want, `${prefix}the ${label} attempt, after its pages were requested`);
  }
}

/**
 * The action landed by its owner, the pages after its landing and their forms requested as is and
 * with other attempts' ids: only the landed attempt has its effect, once.
 */
async function landAndReplayPages(world: AuditWorld, verdict: Verdict, action: AuditAction): Promise<void> {
  const owner = await world.signIn();
  const other = await world.signIn();
  const landed = await world.verified(owner, action);
  const landing = await world.landOn(owner, landed);
  const answers = await answersAfter(world, owner, landing);
  const pages = answers.map((answer) => new URL(answer.url));
  // A page's own form carrying the attempt (a script submits it): sent as the browser sends it.
  const forms = attemptForms(world, answers, landed);
  for (const form of forms) await submitWith(world, owner, form, landed, landed.sessionId, landed.state);
  verdict.note(
    `${action.name}: the landing: ${describeAnswer(landing)}; pages after it: ${pages.map((p) => p.pathname + p.search).join(', ') || 'none'}`,
  );
  const pending = await world.start(owner, action);
  const failed = await world.start(owner, action);
  await world.control.completeSession(failed.sessionId, 'failed', 'otp_locked');
  const foreign = await world.verified(other, action);
  const unknown = `ses_${randomState()}`;
  const ids: [string, string, string | undefined][] = [
    ['unknown', unknown, randomState()],
    ['pending', pending.sessionId, pending.state],
    ['failed', failed.sessionId, failed.state],
    ["another user's", foreign.sessionId, foreign.state],
  ];
  let requested = 0;
  for (const page of pages) {
    await owner.agent.request(page.href);
    requested += 1;
    for (const [, id, state] of ids) {
      for (const url of variants(page, landed, id, state)) {
        await owner.agent.request(url.href);
        requested += 1;
      }
    }
  }
  for (const form of forms) {
    for (const [, id, state] of ids) {
      await submitWith(world, owner, form, landed, id, state);
      requested += 1;
    }
  }
  for (const attempt of [pending, failed]) requested += await landThenReopenPages(world, owner, attempt, pages);
  const sent = forms.map((form) => `${form.method.toUpperCase()} ${form.target.pathname}`);
  verdict.note(
    `${action.name}: ${requested} requests of those pages${sent.length === 0 ? '' : ` and of their forms carrying the attempt (${sent.join(', ')})`}, the user's pending and failed landings among them`,
  );
  await expectEffects(world, verdict, `${action.name}: `, [
    ['landed', landed.sessionId, 1, 'later'],
    ['pending', pending.sessionId, 0, 'later'],
    ['failed', failed.sessionId, 0, 'later'],
    // The sweep fulfils it later, as it should.
    ["another user's (verified, never landed)", foreign.sessionId, 0],
    // An app may write its effect under whatever id the URL names.
    ['unknown', unknown, 0, 'later'],
  ]);
}

export const pageChecks: AuditCheck[] = [
  {
    id: 'landing.pages',
    title:
      "The pages a landing leads to, and the forms they submit carrying the attempt, run nothing: requested again, with an unknown, a pending, a failed or another user's session id, and after the user's own pending or failed attempt landed",
    fix: "Keep every effect inside the action's fulfil(): a success page only shows what happened (kit.attempts.takeLanded(req)); it never grants, and never acts on a session id from its URL or one a landing kept in the session.",
    phase: 'concurrent',
    async run(world, verdict) {
      // Each action has its own success page (its successPath).
      for (const action of world.options.actions) await landAndReplayPages(world, verdict, action);
    },
  },
];
