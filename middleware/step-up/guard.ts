/**
 * kit.requireRecentVerification: Express middleware for the integrator's own routes. A request
 * passes only with a grant of its scope, for its resource, made in this browser session and
 * started at most `maxAge` ago. Otherwise:
 * - a page (GET, HEAD) answers "Confirm it's you": one button that starts a verification (a GET
 *   never sends a text), and the user comes back to the exact path and query, kept server-side;
 * - a form (POST, or PUT/PATCH/DELETE through a method override) is kept server-side as an intent;
 *   after the verification the user confirms it, and the original handler runs with the original
 *   fields, at most once per intent (consumed atomically; never an automatic replay);
 * - a JSON request, or any that is not a browser's navigation (a fetch, an API client), gets 401
 *   `verification_required` with a WWW-Authenticate challenge in the spirit of RFC 9470, so a
 *   single-page app can run the flow and retry; only a navigation gets a page.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { maskDestination } from '../attempts.ts';
import type { KitContext } from '../context.ts';
import { withHookDeadline } from '../routes/hook-deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { readStoredNumber } from '../numbers/parse-number.ts';
import { isSafeSuccessPath } from '../options/options-actions.ts';
import { sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { stepUpFromElsewherePage, stepUpRequiredPage } from '../pages/step-up-pages.ts';
import { answerError, showWithText } from '../routes/answer-error.ts';
import { csrfToken, verifyCsrf } from '../routes/csrf.ts';
import { bodyOf, readBody } from '../routes/start-request.ts';
import { newNonce, newState } from '../routes/state.ts';
import { currentUser } from '../routes/user.ts';
import {
  GUARDABLE_METHODS,
  resolveGuard,
  type RecentVerificationOptions,
  type ResolvedGuard,
} from './guard-options.ts';
import { note, type Guarded } from './guard-note.ts';
import { markGuardedAnswer } from './guarded-answer.ts';
import { hasFreshGrant, sessionGrants, type GrantReading } from './session-grants.ts';
import { keepInPlaceOf, keepIntentWithinLimit, keepPageWithinLimit, replacedUnusable } from './intent-limit.ts';
import { bodyTypeRefused, fieldsToRun, keptFields, uploadRefused } from './kept-fields.ts';
import { labelFor } from './labels.ts';
import { assertResourceKey, boundResourceKey, refuseIllFormedKey } from './resource-key.ts';
import { isNavigationFromElsewhere, isPageMethod, methodOf, verifyFromThisSite, wantsJson } from './request-kind.ts';
import { answerUnenrolled } from './unenrolled.ts';
import {
  browserSessionOf,
  consumeKeptIntent,
  findKeptIntent,
  INTENT_FIELD,
  INTENT_TTL_MS,
  intentIsUsable,
  isAnotherGuards,
} from './scope-actions.ts';

/** A user back from a verification within this long, still refused, is told why instead of asked again. */
const JUST_GRANTED_MS = 2 * 60_000;

/** A guarded address the guard cannot keep: not a same-origin path, or naming a resource no store can keep. */
function unconfirmable(): KitError {
  return new KitError(
    KitErrorCode.InvalidActionParams,
    'This address cannot be confirmed; open the page from the site.',
  );
}

async function resourceKeyOf<Tx>({ context, guard }: Guarded<Tx>, req: Request): Promise<string> {
  const { bindTo } = guard;
  if (bindTo === undefined) return '';
  const key = await withHookDeadline(context, 'bindTo', () => bindTo(req));
  if (key === undefined) return '';
  assertResourceKey(key, guard.scope.name, req);
  // Read from the request (`%00` in a path), and PostgreSQL cannot keep it: refused on every store alike.
  if (key.includes('\0')) throw unconfirmable();
  refuseIllFormedKey(key);
  return boundResourceKey(key);
}

/** The grants this guard reads: the user's, of its scope, in this browser session. */
function readingOf<Tx>({ guard }: Guarded<Tx>, userRef: string, browserSession: string): GrantReading {
  return { stepUp: guard.stepUp, scope: guard.scope.name, userRef, browserSession };
}

/** Keeps the guarded request server-side: where to return (a page), or the form to run once confirmed. */
async function keepIntent<Tx>(
  guarded: Guarded<Tx>,
  req: Request,
  userRef: string,
  resourceKey: string,
  asScopePage: boolean,
  replaces?: string,
): Promise<string> {
  if (!asScopePage && !isSafeSuccessPath(req.originalUrl)) {
    throw unconfirmable();
  }
  const { context, guard } = guarded;
  const now = context.now();
  const kept = {
    userRef,
    scope: guard.scope.name,
    browserSession: browserSessionOf(req),
    resourceKey,
    // A JSON request is retried by its app: the user comes back to the scope's page instead.
    method: asScopePage || methodOf(req) === 'HEAD' ? 'GET' : methodOf(req),
    path: asScopePage ? (guard.scope.successPath ?? '/') : req.originalUrl,
    expiresAt: now + INTENT_TTL_MS,
  };
  const intentId = newState();
  const intent = { ...kept, intentId, fields: asScopePage ? {} : keptFields(req), createdAt: now };
  // A page asked again (reloads, a link opened twice) keeps its one intent: no row per request.
  if (kept.method === 'GET') return keepPageWithinLimit(guard.stepUp, intent);
  if (replaces === undefined) await keepIntentWithinLimit(guard.stepUp, intent);
  // A kept request asked for again moves to its new intent: the old one must never run as well.
  else if (!(await keepInPlaceOf(guard.stepUp, intent, replaces))) {
    note(guarded, req, 'denied');
    throw await replacedUnusable(guard.stepUp, replaces);
  }
  return intentId;
}

/** 401 with a challenge in the spirit of RFC 9470: the app runs the flow (with `intent`) and retries. */
function answerJsonChallenge<Tx>({ context, guard }: Guarded<Tx>, res: Response, intentId: string): void {
  setNoStoreHeaders(res);
  res.setHeader(
    'WWW-Authenticate',
    `VerifyKit error="insufficient_user_authentication", scope="${guard.scope.name}", max_age="${guard.maxAgeSeconds}"`,
  );
  res.status(401).json({
    error: 'verification_required',
    scope: guard.scope.name,
    maxAge: guard.maxAgeSeconds,
    start: context.routes.start,
    intent: intentId,
  });
}

/** Why a user just back from a verification is still refused (its grant too old, or for another resource), if they are. */
async function explanationOf<Tx>(
  { context }: Guarded<Tx>,
  reading: GrantReading,
  resourceKey: string,
): Promise<'tooOld' | 'otherResource' | undefined> {
  const [justGranted] = await sessionGrants(reading, { grantedSince: context.now() - JUST_GRANTED_MS });
  if (justGranted === undefined) return undefined;
  return justGranted.resourceKey === resourceKey ? 'tooOld' : 'otherResource';
}

async function answerRequired<Tx>(
  guarded: Guarded<Tx>,
  req: Request,
  res: Response,
  user: { userRef: string; destination: string },
  resourceKey: string,
  replaces?: string,
): Promise<void> {
  const { context, guard } = guarded;
  const json = wantsJson(req);
  const reading = readingOf(guarded, user.userRef, browserSessionOf(req));
  // Read before anything is kept: a read that fails then leaves a kept form as it was, not used up
  // for a new one nobody is shown.
  const tooOld = await sessionGrants(reading, { resourceKey });
  const explanation = json ? undefined : await explanationOf(guarded, reading, resourceKey);
  // A kept form asked again stays the form it is, whoever asks (a script too): its fields are the
  // user's request, and no app holds them to send again.
  const intentId = await keepIntent(guarded, req, user.userRef, resourceKey, json && replaces === undefined, replaces);
  note(guarded, req, tooOld.length > 0 ? 'expired' : 'required');
  if (json) {
    answerJsonChallenge(guarded, res, intentId);
    return;
  }
  const messages = context.messages.forRequest(req);
  const nonce = newNonce();
  const page = stepUpRequiredPage(
    {
      startPath: context.routes.start as string,
      csrfToken: csrfToken(context, req),
      scope: guard.scope.name,
      intentId,
      // The number as the start will text it (read once, as the policy judges it), not as stored.
      maskedNumber: maskDestination(readStoredNumber(user.destination).e164),
      label: labelFor(guard.scope, messages.lang),
      explanation,
    },
    nonce,
    messages,
  );
  sendPage(res, explanation === undefined ? 200 : 403, page, nonce);
}

/**
 * A page another site sent the user to: nothing is kept (another site could fill the user's kept
 * requests with links), and one link opens the same page from this site, where the guard asks as usual.
 */
function answerFromElsewhere<Tx>(guarded: Guarded<Tx>, req: Request, res: Response): void {
  if (!isSafeSuccessPath(req.originalUrl)) {
    throw unconfirmable();
  }
  note(guarded, req, 'required');
  const messages = guarded.context.messages.forRequest(req);
  const nonce = newNonce();
  const label = labelFor(guarded.guard.scope, messages.lang);
  sendPage(res, 200, stepUpFromElsewherePage({ path: req.originalUrl, label }, nonce, messages), nonce);
}

/**
 * A kept form coming back from its confirmation page: the original fields replace the page's, and
 * the handler runs once, only for the user, browser session, route and resource it was kept for.
 * False, nothing done, for a form a stricter guard after this one kept (a route's own, behind an
 * area's): to this guard, that confirmation is a form as any other.
 */
async function runKeptRequest<Tx>(
  guarded: Guarded<Tx>,
  req: Request,
  res: Response,
  next: NextFunction,
  user: { userRef: string; destination: string },
  intentId: string,
): Promise<boolean> {
  const { context, guard } = guarded;
  await verifyCsrf(context, req);
  const now = context.now();
  const browserSession = browserSessionOf(req);
  const intent = await findKeptIntent(guard.stepUp, intentId);
  if (isAnotherGuards(intent, { scope: guard.scope.name, bindsResource: guard.bindTo !== undefined }, req))
    return false;
  const expected = { scope: guard.scope.name, userRef: user.userRef, browserSession, now };
  if (!intentIsUsable(intent, expected) || intent.method !== methodOf(req) || intent.path !== req.originalUrl) {
    note(guarded, req, 'denied');
    throw new KitError(KitErrorCode.StepUpIntentUnusable, 'This request can no longer be used; nothing was changed.');
  }
  const confirmation: unknown = req.body;
  req.body = fieldsToRun(intent);
  const resourceKey = await resourceKeyOf(guarded, req);
  const reading = readingOf(guarded, user.userRef, browserSession);
  const fresh = await hasFreshGrant(reading, resourceKey, now - guard.maxAgeMs);
  // Sent back under another resource (the user switched workspace since): its fields were never
  // sent for that one, so it is not kept for it, as one sent to another path is not; it stays kept for its own.
  if (resourceKey !== intent.resourceKey) {
    note(guarded, req, 'denied');
    const refused = new KitError(
      KitErrorCode.StepUpIntentUnusable,
      'This request was kept for another resource than bindTo reads now (the user switched resource, or two guards of one scope bind different keys: give one its own scope); nothing was kept or changed.',
    );
    // Still open for its own resource: the user is told to go back there, not that nothing is left.
    throw showWithText(refused, 'step_up_intent_other_resource');
  }
  if (!fresh) {
    // No number to text since it was kept: refused as any request of theirs, the form left kept.
    if (user.destination === '') {
      req.body = confirmation;
      answerUnenrolled(guarded, req, res, next);
      return true;
    }
    // The same request asked again is kept anew in its place.
    await answerRequired(guarded, req, res, user, resourceKey, intentId);
    return true;
  }
  // One caller, on any instance, gets the intent: a reload, a second tab or a replay runs nothing.
  if ((await consumeKeptIntent(guard.stepUp, intentId, now)) === undefined) {
    note(guarded, req, 'denied');
    throw new KitError(
      KitErrorCode.StepUpIntentUnusable,
      'This request was already carried out; nothing was changed now.',
    );
  }
  note(guarded, req, 'consumed');
  markGuardedAnswer(res);
  next();
  return true;
}

async function decide<Tx>(guarded: Guarded<Tx>, req: Request, res: Response, next: NextFunction): Promise<void> {
  const { context, guard } = guarded;
  const user = await currentUser(context, req);
  if (user === null) throw new KitError(KitErrorCode.NotSignedIn, 'Sign in to continue.');
  const page = isPageMethod(methodOf(req));
  // An upload's body is left to the route's own parser: with a fresh grant it runs as sent.
  const upload = !page && req.is('multipart/form-data') === 'multipart/form-data';
  if (!page) {
    if (!upload) await readBody([formParser], req, res);
    const intentId = bodyOf(req)[INTENT_FIELD];
    if (typeof intentId === 'string') {
      // A confirmation is the kit's own form, never an upload: the kept fields would run with its files.
      if (upload) throw uploadRefused();
      if (await runKeptRequest(guarded, req, res, next, user, intentId)) return;
    }
  }
  const resourceKey = await resourceKeyOf(guarded, req);
  const reading = readingOf(guarded, user.userRef, browserSessionOf(req));
  const fresh = await hasFreshGrant(reading, resourceKey, context.now() - guard.maxAgeMs);
  // A form runs, or is kept, only when it came from this site's own pages: a cross-site post neither.
  if (!page) verifyFromThisSite(context, req);
  if (fresh) {
    note(guarded, req, 'granted');
    markGuardedAnswer(res);
    next();
    return;
  }
  if (user.destination === '') {
    answerUnenrolled(guarded, req, res, next);
    return;
  }
  // Another site's script is refused (never a 2xx); a navigation gets a link to the page here.
  if (page && isNavigationFromElsewhere(context, req)) {
    answerFromElsewhere(guarded, req, res);
    return;
  }
  // Kept requests hold form fields only: an upload is refused before anything is stored or sent
  // (a script's gets the challenge, which keeps none of its body, and sends it again once granted).
  if (upload && !wantsJson(req)) throw uploadRefused();
  // Any other body the kit cannot read as fields would be kept empty and run without them.
  if (!page && !wantsJson(req) && req.is('application/x-www-form-urlencoded') === false) throw bodyTypeRefused(req);
  await answerRequired(guarded, req, res, user, resourceKey);
}

/**
 * The guard leaves only the methods its `methods` option leaves out. Any other method (OPTIONS,
 * PROPFIND, ...), which `app.use` and `app.all` hand it too, is guarded as a form: never let through.
 */
function appliesTo(guard: ResolvedGuard, method: string): boolean {
  return guard.methods.has(method) || !GUARDABLE_METHODS.includes(method);
}

/**
 * The step-up an action's start requires (its `requireRecentVerification`), judged as this guard
 * judges a form: true when the start may run (a fresh grant, or a kept start confirmed, whose
 * fields then replace the confirmation's); false when the guard has answered, nothing sent.
 */
export function stepUpBeforeStart<Tx>(
  context: KitContext<Tx>,
  options: Pick<RecentVerificationOptions, 'scope' | 'maxAge'>,
): (req: Request, res: Response) => Promise<boolean> {
  const guarded: Guarded<Tx> = { context, guard: resolveGuard(context, options) };
  return async (req, res) => {
    let passed = false;
    await decide(guarded, req, res, (() => {
      passed = true;
    }) as NextFunction);
    return passed;
  };
}

const formParser = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 });

export function requireRecentVerification<Tx>(
  context: KitContext<Tx>,
  options: RecentVerificationOptions,
): RequestHandler {
  const guarded: Guarded<Tx> = { context, guard: resolveGuard(context, options) };
  return (req, res, next) => {
    if (!appliesTo(guarded.guard, methodOf(req))) {
      next();
      return;
    }
    decide(guarded, req, res, next).catch((error: unknown) =>
      answerError(context, 'step-up', wantsJson(req) ? 'json' : 'html', error, res, next),
    );
  };
}
