/**
 * The kit's step-up page (GET `routes.stepUp`): where the landing sends a user who verified for a
 * kept form. It names what they are about to do and posts the form back to its own path with a
 * fresh CSRF token; the guard there runs it once. Nothing runs on this GET.
 */
import type { Request, Response } from 'express';
import type { KitContext } from '../context.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { sendPage } from '../pages/page-headers.ts';
import { stepUpConfirmPage } from '../pages/step-up-pages.ts';
import { queryOf } from '../routes/complete-return.ts';
import { csrfToken } from '../routes/csrf.ts';
import { newNonce } from '../routes/state.ts';
import { currentUser } from '../routes/user.ts';
import type { StepUpStore } from '../store/types.ts';
import { labelFor } from './labels.ts';
import { browserSessionOf, findKeptIntent, INTENT_FIELD, intentIsUsable } from './scope-actions.ts';

export function stepUpConfirmHandler<Tx>(context: KitContext<Tx>, stepUp: StepUpStore) {
  return async (req: Request, res: Response): Promise<void> => {
    const user = await currentUser(context, req);
    if (user === null) throw new KitError(KitErrorCode.NotSignedIn, 'Sign in to continue.');
    const intentId = queryOf(req).intent;
    const intent = await findKeptIntent(stepUp, intentId);
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
    const messages = context.messages.forRequest(req);
    const nonce = newNonce();
    const page = stepUpConfirmPage(
      {
        method: intent.method,
        path: intent.path,
        csrfToken: csrfToken(context, req),
        intentField: INTENT_FIELD,
        intentId: intent.intentId,
        label: labelFor(scope, messages.lang),
        // The kept method itself, not the form's `_method`: an app's override may take that field out.
        methodOverride: intent.method === 'POST' ? undefined : intent.method,
      },
      nonce,
      messages,
    );
    sendPage(res, 200, page, nonce);
  };
}
