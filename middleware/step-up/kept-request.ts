/**
 * A kept form sent back from its confirmation page to the guard that kept it: run once with its
 * own fields when the grant is fresh, asked again (kept anew in its place) when it is not.
 */
import type { NextFunction, Request, Response } from 'express';
import { KitError, KitErrorCode } from '../errors.ts';
import { answerError, showWithText } from '../routes/answer-error.ts';
import { verifyCsrf } from '../routes/csrf.ts';
import { answerRequired } from './answer-required.ts';
import { note, type Guarded } from './guard-note.ts';
import { readingOf, resourceKeyOf } from './guard-request.ts';
import { markGuardedAnswer } from './guarded-answer.ts';
import { fieldsToRun } from './kept-fields.ts';
import { methodOf, wantsJson } from './request-kind.ts';
import {
  browserSessionOf,
  consumeKeptIntent,
  findKeptIntent,
  intentIsUsable,
  isAnotherGuards,
} from './scope-actions.ts';
import { hasFreshGrant } from './session-grants.ts';
import { answerUnenrolled } from './unenrolled.ts';

/**
 * A kept form coming back from its confirmation page: the original fields replace the page's, and
 * the handler runs once, only for the user, browser session, route and resource it was kept for.
 * False, nothing done, for a form a stricter guard after this one kept (a route's own, behind an
 * area's): to this guard, that confirmation is a form as any other.
 */
export async function runKeptRequest<Tx>(
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
  const fresh = await hasFreshGrant(reading, resourceKey, { now, maxAgeMs: guard.maxAgeMs });
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
    // No number to text since it was kept: answered as any request of theirs, the form left kept
    // unless the app's onUnenrolled lets them through, when it runs as kept, once.
    if (user.destination === '') {
      const fields: unknown = req.body;
      req.body = confirmation;
      answerUnenrolled(guarded, req, res, passedOnWithFields(guarded, { req, res, next }, intentId, fields));
      return true;
    }
    // The same request asked again is kept anew in its place.
    await answerRequired(guarded, req, res, user, resourceKey, intentId);
    return true;
  }
  await runOnce(guarded, { req, res, next }, intentId, now);
  return true;
}

type Exchange = { req: Request; res: Response; next: NextFunction };

/** Runs the kept form's handler if this caller, on any instance, uses the intent up: a reload, a second tab or a replay runs nothing. */
async function runOnce<Tx>(guarded: Guarded<Tx>, { req, res, next }: Exchange, intentId: string, now: number) {
  if ((await consumeKeptIntent(guarded.guard.stepUp, intentId, now)) === undefined) {
    note(guarded, req, 'denied');
    throw new KitError(
      KitErrorCode.StepUpIntentUnusable,
      'This request was already carried out; nothing was changed now.',
    );
  }
  note(guarded, req, 'consumed');
  markGuardedAnswer(res);
  next();
}

/**
 * The next() an app's onUnenrolled calls to let a user without a number through a kept form's
 * confirmation: the handler runs with the form's own fields (never the confirmation's token and
 * id), once. `next('route')` and `next('router')` skip the handler, the form left kept. Anything
 * else passes on, as Express reads it: `next(null)` is how a Node-style callback says "no error"
 * (an error never reaches here: the hand-over answers it).
 */
function passedOnWithFields<Tx>(guarded: Guarded<Tx>, exchange: Exchange, intentId: string, fields: unknown) {
  const { req, res, next } = exchange;
  return ((skip?: unknown) => {
    if (skip === 'route' || skip === 'router') {
      next(skip);
      return;
    }
    req.body = fields;
    runOnce(guarded, exchange, intentId, guarded.context.now()).catch((error: unknown) =>
      answerError(guarded.context, 'step-up', wantsJson(req) ? 'json' : 'html', error, res, next),
    );
  }) as NextFunction;
}
