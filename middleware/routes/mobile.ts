/**
 * The mobile completion (platform 'mobile'): the app, opened by the deep link, POSTs JSON
 * `{ session_id, state }`. Exactly the landing's rules and the same fulfil path; the answer is
 * JSON. Only the attempt's own user learns the outcome; anyone else gets `processed`.
 */
import type { Request, Response, Router } from 'express';
import type { KitContext } from '../context.ts';
import { isKitError, KitError, KitErrorCode } from '../errors.ts';
import { setNoStoreHeaders } from '../pages/page-headers.ts';
import { route } from './answer-error.ts';
import { currentUser } from './user.ts';
import { completeReturn } from './complete-return.ts';
import { bodyProblem, strictJson } from './json-body.ts';

/** The mobile completion's JSON answer. */
export type MobileOutcome =
  | { outcome: 'fulfilled' }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'pending' }
  | { outcome: 'expired' }
  /** A newer verification of the same action was applied instead; this one never will be. */
  | { outcome: 'superseded' }
  | { outcome: 'processed' };

const parseJson = strictJson('4kb');

function readJson(req: Request, res: Response): Promise<void> {
  if (!req.is('application/json')) {
    return Promise.reject(
      new KitError(KitErrorCode.InvalidReturnParams, 'Send { "session_id", "state" } as application/json.'),
    );
  }
  return new Promise((resolve, reject) => {
    parseJson(req, res, (error?: unknown) => {
      if (error === undefined || error === null) resolve();
      // The kit's own refusal (a body the app's parser read first) as it is; any other is the body's.
      else if (isKitError(error)) reject(error);
      else reject(new KitError(KitErrorCode.InvalidReturnParams, bodyProblem(error)));
    });
  });
}

export function mountMobile<Tx>(router: Router, context: KitContext<Tx>, completePath: string): void {
  router.all(completePath, (req, res, next) => {
    if (req.method === 'POST') {
      next();
      return;
    }
    setNoStoreHeaders(res);
    res.setHeader('Allow', 'POST');
    res.status(405).json({ error: 'method_not_allowed', message: 'POST { "session_id", "state" } as JSON.' });
  });
  router.post(
    completePath,
    route(context, 'mobile-complete', 'json', async (req: Request, res: Response) => {
      await readJson(req, res);
      const completion = await completeReturn(context, req.body, 'mobile-complete', res);
      const { attempt } = completion;
      const user = await currentUser(context, req);
      let body: MobileOutcome;
      if (user === null || user.userRef !== attempt.userRef) body = { outcome: 'processed' };
      else if (completion.kind === 'failed') body = { outcome: 'failed', reason: completion.reason };
      else body = { outcome: completion.kind };
      setNoStoreHeaders(res);
      res.status(200).json(body);
    }),
  );
}
