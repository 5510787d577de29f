/**
 * What the start route answers besides a failure: the auto-submit page (web) or JSON (mobile), the
 * number form back for a typed number that cannot be texted, its own 405, and the start-again page
 * where a used or restored auto-submit page goes instead of re-sending its handoff.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { KitContext } from '../context.ts';
import { isKitError, KitErrorCode } from '../errors.ts';
import { handoffPage } from '../pages/handoff-page.ts';
import { sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { ENTERED_NUMBER_FIELD } from '../pages/pages.ts';
import type { ActionDefinition, CreatedSession } from '../types.ts';
import { logKitError } from './answer-error.ts';
import { queryOf } from './complete-return.ts';
import { restartFormFor } from './restart-form.ts';
import { pickAction } from './start-request.ts';
import { newNonce } from './state.ts';
import { currentUser } from './user.ts';

/** Where a used auto-submit page goes instead of re-sending its handoff. */
export function startAgainUrl(startAgainPath: string, actionName: string): string {
  return `${startAgainPath}?action=${encodeURIComponent(actionName)}`;
}

/** The mobile app gets JSON; a browser gets the auto-submit page posting the handoff to verifyUrl. */
export function answerStart<Tx>(
  context: KitContext<Tx>,
  res: Response,
  created: CreatedSession,
  startAgain: string,
  originOf: (verifyUrl: string) => string,
  maskedNumber: string | undefined,
): void {
  const { verifyUrl, handoff, expiresInSeconds } = created;
  if (context.platform === 'mobile') {
    setNoStoreHeaders(res);
    res.status(200).json({ verifyUrl, handoff, expiresInSeconds });
    return;
  }
  const nonce = newNonce();
  const page = handoffPage(
    { verifyUrl, handoff, startAgainUrl: startAgain, ...(maskedNumber === undefined ? {} : { maskedNumber }) },
    nonce,
    context.messages.forRequest(res.req),
  );
  sendPage(res, 200, page, nonce, handoffFormAction(originOf(verifyUrl), context.returnOrigin));
}

/**
 * Where the handoff form may go: the verify page, and the registered returnUrl's origin (from the
 * options, never a request), because the verify page answers a session that has already ended with
 * a redirect there and browsers check form-action on a form's redirects too.
 */
function handoffFormAction(verifyOrigin: string, returnOrigin: string | null): string {
  return returnOrigin === null || returnOrigin === verifyOrigin ? verifyOrigin : `${verifyOrigin} ${returnOrigin}`;
}

/**
 * A typed number that cannot be texted, on the web: the kit's number form back (422) with what the
 * user typed and why, so they correct it. A restart's kept number refused now gets the form empty:
 * a new start, its number typed anew and policed again. False when the error is answered as any other.
 */
export function answeredWithNumberForm<Tx>(
  context: KitContext<Tx>,
  req: Request,
  res: Response,
  action: ActionDefinition<Tx>,
  body: Record<string, unknown>,
  error: unknown,
  restarted: boolean,
): boolean {
  const numberProblem =
    isKitError(error, KitErrorCode.InvalidPhoneNumber) || isKitError(error, KitErrorCode.PhoneNumberRefused);
  // Only a typed number can be corrected in the form: a refused stored one gets the error page.
  if (!numberProblem || action.destination !== 'entered' || context.platform !== 'web') return false;
  if (context.errors === 'next') return false;
  const form = restartFormFor(context, req, action.name);
  if (form === undefined) return false;
  logKitError(context, 'start', error);
  const typed = body[ENTERED_NUMBER_FIELD];
  const messages = context.messages.forRequest(req);
  const nonce = newNonce();
  const page = context.pages.enterNumber(
    {
      form,
      entered: typeof typed === 'string' && !restarted ? typed.slice(0, 64) : '',
      message: restarted
        ? messages.errors.kept_number_refused
        : messages.errors[error.code as 'invalid_phone_number' | 'phone_number_refused'],
    },
    nonce,
    messages,
  );
  sendPage(res, error.status, page, nonce);
  return true;
}

/** The start route's own 405 for anything but POST, as a page or JSON. */
export function methodNotAllowed<Tx>(context: KitContext<Tx>, format: 'html' | 'json'): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'POST') {
      next();
      return;
    }
    res.setHeader('Allow', 'POST');
    const messages = context.messages.forRequest(req);
    const message = messages.errors.method_not_allowed;
    if (format === 'json') {
      setNoStoreHeaders(res);
      res.status(405).json({ error: 'method_not_allowed', message });
      return;
    }
    const nonce = newNonce();
    sendPage(
      res,
      405,
      context.pages.error({ status: 405, code: 'method_not_allowed', message }, nonce, messages),
      nonce,
    );
  };
}

/** The start-again page: a fresh start form, where the action can be started from it again. */
export function startAgainHandler<Tx>(context: KitContext<Tx>) {
  return async (req: Request, res: Response): Promise<void> => {
    const action = pickAction(context, queryOf(req).action);
    const user = await currentUser(context, req);
    // Actions that read form fields (in prepare, or a typed number) are started from a form again.
    const fromOwnForm = action.prepare !== undefined || action.destination === 'entered';
    const restart = user !== null && !fromOwnForm ? restartFormFor(context, req, action.name) : undefined;
    const nonce = newNonce();
    sendPage(res, 200, context.pages.startAgain({ restart }, nonce, context.messages.forRequest(req)), nonce);
  };
}
