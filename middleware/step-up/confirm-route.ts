/**
 * The kit's step-up page (`routes.stepUp?intent=`): where the landing sends a user who verified for
 * a kept form. Its GET names what they are about to do, with a fresh CSRF token; nothing runs on it.
 * Its form posts back to that same address, which sends it on, body and all, to the path the form
 * was kept at: the guard there runs it once. The page never holds that path (it may hold a phone
 * number, and a full number appears only where the user typed it).
 */
import type { Request, Response } from 'express';
import type { KitContext } from '../context.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { isSafeSuccessPath } from '../options/options-actions.ts';
import { sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { stepUpConfirmPage } from '../pages/step-up-pages.ts';
import { queryOf } from '../routes/complete-return.ts';
import { csrfToken, verifyCsrf } from '../routes/csrf.ts';
import { bodyParsers, readBody } from '../routes/start-request.ts';
import { newNonce } from '../routes/state.ts';
import { currentUser } from '../routes/user.ts';
import type { ScopeDefinition } from '../types.ts';
import type { StepUpIntent, StepUpStore } from '../store/types.ts';
import { labelFor } from './labels.ts';
import { unreadableStoreAnswer } from './store-answers.ts';
import { sessionGrants } from './session-grants.ts';
import { browserSessionOf, findKeptIntent, INTENT_FIELD, intentIsUsable } from './scope-actions.ts';

/** A request target as a Location header holds it unchanged: printable ASCII, or the Latin-1 bytes Node reads. */
const AS_SENT = /^[\x21-\x7e\x80-\xff]*$/;

/** The kept form `?intent=` names, when it is still this user's, in this browser session, to confirm. */
async function keptFormOf<Tx>(
  context: KitContext<Tx>,
  stepUp: StepUpStore,
  req: Request,
): Promise<{ intent: StepUpIntent; scope: ScopeDefinition }> {
  const user = await currentUser(context, req);
  if (user === null) throw new KitError(KitErrorCode.NotSignedIn, 'Sign in to continue.');
  const intent = await findKeptIntent(stepUp, queryOf(req).intent);
  const scope = intent === undefined ? undefined : context.scopes.get(intent.scope);
  const expected = {
    scope: intent?.scope ?? '',
    userRef: user.userRef,
    browserSession: browserSessionOf(req),
    now: context.now(),
  };
  if (scope === undefined || !intentIsUsable(intent, expected) || intent.method === 'GET') {
    throw new KitError(KitErrorCode.StepUpIntentUnusable, 'This request can no longer be used; nothing was changed.');
  }
  return { intent, scope };
}

/**
 * Whether a verification granted the kept form's scope and resource, in its browser session, since
 * it was kept: the page says "You confirmed it's you" only then (the id alone proves nothing).
 */
async function verifiedSinceKept(stepUp: StepUpStore, intent: StepUpIntent, now: number): Promise<boolean> {
  const reading = { stepUp, scope: intent.scope, userRef: intent.userRef, browserSession: intent.browserSession };
  const grants = await sessionGrants(reading, { resourceKey: intent.resourceKey, grantedSince: intent.createdAt });
  return grants.some((grant) => grant.grantedAt <= now);
}

export function stepUpConfirmHandler<Tx>(context: KitContext<Tx>, stepUp: StepUpStore) {
  return async (req: Request, res: Response): Promise<void> => {
    const { intent, scope } = await keptFormOf(context, stepUp, req);
    const verified = await verifiedSinceKept(stepUp, intent, context.now());
    const messages = context.messages.forRequest(req);
    const nonce = newNonce();
    const page = stepUpConfirmPage(
      {
        method: intent.method,
        path: intent.path,
        csrfToken: csrfToken(context, req),
        intentField: INTENT_FIELD,
        intentId: intent.intentId,
        label: labelFor(scope, messages.lang, context.logger),
        // The kept method itself, not the form's `_method`: an app's override may take that field out.
        methodOverride: intent.method === 'POST' ? undefined : intent.method,
        verified,
      },
      nonce,
      messages,
    );
    sendPage(res, 200, page, nonce);
  };
}

/**
 * The confirmation page's form, sent to the page's own address: on, with a 307 (the browser sends
 * the same body again), to the path the form was kept at, read from the store by the kept form's id,
 * never from a parameter or a header. Only this site's page sends it on; the guard there judges it.
 */
export function stepUpConfirmSendHandler<Tx>(context: KitContext<Tx>, stepUp: StepUpStore) {
  const parsers = bodyParsers(context);
  return async (req: Request, res: Response): Promise<void> => {
    await readBody(parsers, req, res);
    await verifyCsrf(context, req);
    const { intent } = await keptFormOf(context, stepUp, req);
    // Never a redirect to a URL from stored state: the path as the store answers it (a store of the
    // app's own may answer anything) is sent on only as a same-origin path, as the guard kept it.
    if (!isSafeSuccessPath(intent.path)) {
      throw unreadableStoreAnswer(
        'stepUp.findIntent answered an intent whose path is',
        intent.path,
        'a same-origin path (one "/", no "\\")',
        'nothing was sent on or run',
      );
    }
    setNoStoreHeaders(res);
    // The path exactly as the browser sent it when the form was kept: re-encoded (res.location turns
    // `10%` into `10%25`, `{` into `%7B`), it reaches the guard as another address, which refuses it.
    // Only what a header cannot hold as it is (a space) is encoded, as Express does.
    if (AS_SENT.test(intent.path)) res.setHeader('Location', intent.path);
    else res.location(intent.path);
    res.statusCode = 307;
    res.setHeader('Content-Length', '0');
    res.end();
  };
}
