/**
 * The landing (GET at the returnUrl's path). Arrival proves nothing: the session_id and state are
 * read on the server, the attempt is resolved by state, and the one fulfil path re-reads the
 * outcome. Only then does the signed-in user matter, and only for what the page shows: the
 * attempt's own user is sent (303) to the action's server-side successPath or shown the failure;
 * anyone else sees a neutral page without details.
 */
import type { Request, Response, Router } from 'express';
import type { KitConfig } from './config.ts';
import type { FulfilDeps } from './fulfil.ts';
import { deliverAfterResponse } from './outcomes.ts';
import { newNonce, sendPage, setNoStoreHeaders } from './pages.ts';
import { currentUser, route } from './respond.ts';
import { completeReturn } from './returned.ts';
import { restartFormFor } from './start.ts';

export function mountLanding<Tx>(router: Router, config: KitConfig<Tx>, deps: FulfilDeps<Tx>): void {
  const landingPath = config.landingPath;
  if (landingPath === null) return;

  router.get(
    landingPath,
    route(config, 'landing', 'html', async (req: Request, res: Response) => {
      const completion = await completeReturn(config, deps, req.query, 'landing');
      deliverAfterResponse(deps, completion.eventIds, res);
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
      if (!isOwner || completion.kind === 'fulfilled') {
        sendPage(res, 200, config.pages.complete({}, nonce), nonce);
        return;
      }
      switch (completion.kind) {
        case 'superseded':
          // No restart form: the newer verification the user finished is the one that counts.
          sendPage(res, 200, config.pages.failed({ reason: 'superseded', restart: undefined }, nonce), nonce);
          return;
        case 'failed':
        case 'expired': {
          const reason = completion.kind === 'failed' ? completion.reason : 'expired';
          const restart = restartFormFor(config, req, attempt.action, attempt.state);
          sendPage(res, 200, config.pages.failed({ reason, restart }, nonce), nonce);
          return;
        }
        case 'pending': {
          const stillRefreshing = config.now() < attempt.createdAt + config.landing.refreshWindowMs;
          const refreshSeconds = stillRefreshing ? config.landing.refreshSeconds : null;
          sendPage(res, 200, config.pages.pending({ refreshSeconds }, nonce), nonce);
          return;
        }
      }
    }),
  );
}
