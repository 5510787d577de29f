/**
 * The landing (GET at the returnUrl's path). Arrival proves nothing: the session_id and state are
 * read on the server, the attempt is resolved by state, and the one fulfil path re-reads the
 * outcome. Only then does the signed-in user matter, and only for what the page shows: the
 * attempt's own user is sent (303) to the action's server-side successPath or shown the failure;
 * anyone else sees a neutral page without details.
 */
import type { Request, Response, Router } from 'express';
import type { KitContext } from './context.ts';
import { deliverAfterResponse } from './outcomes.ts';
import type { Attempt } from './store/types.ts';
import { newNonce, PENDING_HEADER, sendPage, setNoStoreHeaders, type PendingPage } from './pages.ts';
import { currentUser, route } from './respond.ts';
import { completeReturn } from './returned.ts';
import { restartFormFor } from './start.ts';

/**
 * The pending page's context: it checks again by itself only within the refresh window; its
 * "Check again" target is the landing's own path with the stored (validated) identifiers.
 */
function pendingPage<Tx>(config: KitContext<Tx>, landingPath: string, attempt: Attempt): PendingPage {
  const windowEnd = attempt.createdAt + config.landing.refreshWindowMs;
  const remainingMs = windowEnd - config.now();
  const query = new URLSearchParams({ session_id: attempt.sessionId, state: attempt.state });
  return {
    refreshSeconds: remainingMs > 0 ? config.landing.refreshSeconds : null,
    refreshForSeconds: remainingMs > 0 ? Math.ceil(remainingMs / 1000) : null,
    checkAgainUrl: `${landingPath}?${query.toString()}`,
  };
}

export function mountLanding<Tx>(router: Router, config: KitContext<Tx>, landingPath: string): void {
  router.get(
    landingPath,
    route(config, 'landing', 'html', async (req: Request, res: Response) => {
      const completion = await completeReturn(config, req.query, 'landing');
      deliverAfterResponse(config, completion.eventIds, res);
      const { attempt } = completion;

      const user = await currentUser(config, req);
      const isOwner = user !== null && user.userRef === attempt.userRef;
      if (isOwner && completion.kind === 'fulfilled') {
        setNoStoreHeaders(res);
        // The stored, server-side destination: never a URL from a parameter, a header or state.
        res.redirect(303, attempt.returnTo);
        return;
      }
      const nonce = newNonce();
      const messages = config.messages.forRequest(req);
      if (!isOwner || completion.kind === 'fulfilled') {
        sendPage(res, 200, config.pages.complete({}, nonce, messages), nonce);
        return;
      }
      switch (completion.kind) {
        case 'superseded':
          // No restart form: the newer verification the user finished is the one that counts.
          sendPage(res, 200, config.pages.failed({ reason: 'superseded', restart: undefined }, nonce, messages), nonce);
          return;
        case 'failed':
        case 'expired': {
          const reason = completion.kind === 'failed' ? completion.reason : 'expired';
          const restart = restartFormFor(config, req, attempt.action, attempt.state);
          sendPage(res, 200, config.pages.failed({ reason, restart }, nonce, messages), nonce);
          return;
        }
        case 'pending': {
          res.setHeader(PENDING_HEADER, 'pending');
          sendPage(res, 200, config.pages.pending(pendingPage(config, landingPath, attempt), nonce, messages), nonce);
          return;
        }
      }
    }),
  );
}
