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
import type { KitContext } from '../context.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { answerError } from '../routes/answer-error.ts';
import { bodyOf, readBody } from '../routes/start-request.ts';
import { currentUser } from '../routes/user.ts';
import { answerFromElsewhere, answerRequired } from './answer-required.ts';
import {
  GUARDABLE_METHODS,
  resolveGuard,
  type RecentVerificationOptions,
  type ResolvedGuard,
} from './guard-options.ts';
import { note, type Guarded } from './guard-note.ts';
import { readingOf, resourceKeyOf } from './guard-request.ts';
import { markGuardedAnswer } from './guarded-answer.ts';
import { bodyTypeRefused, uploadRefused } from './kept-fields.ts';
import { runKeptRequest } from './kept-request.ts';
import { isNavigationFromElsewhere, isPageMethod, methodOf, verifyFromThisSite, wantsJson } from './request-kind.ts';
import { browserSessionOf, INTENT_FIELD } from './scope-actions.ts';
import { hasFreshGrant } from './session-grants.ts';
import { answerUnenrolled } from './unenrolled.ts';

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
    } else if (intentId !== undefined) {
      // Only the kit's confirmation sends it, once: sent twice (a list) or with brackets (an
      // object) it names no kept form, and kept as a form of its own it would run with that list.
      throw new KitError(
        KitErrorCode.InvalidActionParams,
        `This form names the request to confirm (${INTENT_FIELD}) more than once or as a list; nothing was kept or sent.`,
      );
    }
  }
  const resourceKey = await resourceKeyOf(guarded, req);
  const reading = readingOf(guarded, user.userRef, browserSessionOf(req));
  const fresh = await hasFreshGrant(reading, resourceKey, { now: context.now(), maxAgeMs: guard.maxAgeMs });
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
    const refuse = (error: unknown) =>
      answerError(context, 'step-up', wantsJson(req) ? 'json' : 'html', error, res, next);
    let applies: boolean;
    try {
      applies = appliesTo(guarded.guard, methodOf(req));
    } catch (error) {
      // Answered here, as decide's errors are: thrown, it would reach the app's error handler (a stack trace).
      refuse(error);
      return;
    }
    if (!applies) {
      next();
      return;
    }
    decide(guarded, req, res, next).catch(refuse);
  };
}
