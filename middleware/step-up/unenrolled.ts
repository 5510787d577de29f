/**
 * A guard's answer to a signed-in user without a phone number: no verification can open the route
 * for them, so never "Confirm it's you" (no silent bypass, no loop). The app's `onUnenrolled`
 * answers when it has one, bounded as integrator code is; otherwise a 403 page, or JSON to a script.
 */
import type { NextFunction, Request, Response } from 'express';
import { sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { stepUpUnenrolledPage } from '../pages/step-up-pages.ts';
import { answerError, logAfterAnswer } from '../routes/answer-error.ts';
import { newNonce } from '../routes/state.ts';
import { note, type Guarded } from './guard-note.ts';
import { handOverWithin } from './hand-over.ts';
import { wantsJson } from './request-kind.ts';

export function answerUnenrolled<Tx>(guarded: Guarded<Tx>, req: Request, res: Response, next: NextFunction): void {
  note(guarded, req, 'denied');
  const { onUnenrolled } = guarded.guard;
  if (onUnenrolled !== undefined) {
    const { context } = guarded;
    handOverWithin(
      'onUnenrolled',
      context.hookTimeouts.onUnenrolled,
      onUnenrolled,
      { req, res, next },
      {
        answer: (error) => answerError(context, 'step-up', wantsJson(req) ? 'json' : 'html', error, res, next),
        afterAnswer: (error) => logAfterAnswer(context, 'step-up', error),
      },
    );
    return;
  }
  const messages = guarded.context.messages.forRequest(req);
  if (wantsJson(req)) {
    // A script reads JSON, as from the challenge: no verification can open this route for the user.
    setNoStoreHeaders(res);
    res.vary('Accept-Language');
    res
      .status(403)
      .json({ error: 'step_up_unenrolled', scope: guarded.guard.scope.name, message: messages.stepUp.unenrolled });
    return;
  }
  const nonce = newNonce();
  sendPage(res, 403, stepUpUnenrolledPage(nonce, messages), nonce);
}
