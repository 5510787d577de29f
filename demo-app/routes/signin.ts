/** The demo's static assets, and its sign-in and sign-out (a pick from the seeded users; no passwords). */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { GrantReader, KitLogger } from 'hosted-sms-verify-kit';
import { demoCsrfToken, demoCsrfValid } from '../csrf.ts';
import type { DemoReads } from '../data.ts';
import { demoTexts } from '../i18n.ts';
import '../session-data.ts';
import { errorPage } from '../views/errors.ts';
import { logDemoError } from './errors.ts';
import { signinPage } from '../views/signin.ts';
import { CSS } from '../views/style.ts';
import { SESSION_COOKIE } from './sessions.ts';
import { signedInUser } from './signed-in.ts';

export function mountAssets(app: express.Express): void {
  app.get('/favicon.ico', (_req, res) => {
    res.status(204).setHeader('Cache-Control', 'public, max-age=86400').end();
  });

  app.get('/assets/demo.css', (_req, res) => {
    res.type('css').setHeader('Cache-Control', 'public, max-age=300').send(CSS);
  });
}

export function mountSignIn(
  app: express.Express,
  queries: DemoReads,
  grants: GrantReader,
  logger: KitLogger | undefined,
): void {
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });

  app.get('/signin', async (req, res) => {
    if ((await signedInUser(queries, req)) !== undefined) {
      res.redirect(303, '/');
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.send(signinPage({ t: demoTexts(req), users: await queries.users(), csrf: demoCsrfToken(req) }));
  });

  app.post('/signin', form, (req, res, next) => signIn(queries, req, res, next));

  app.post('/signout', form, (req, res, next) => {
    if (!demoCsrfValid(req)) {
      res.status(403).send(errorPage({ t: demoTexts(req), status: 403, ...demoTexts(req).errors.signoutRefused }));
      return;
    }
    signOut(queries, grants, logger, req, res).catch(next);
  });
}

/**
 * Ends the session, then the user's step-up grants. The sign-out never fails on the grants: a grant
 * is bound to the browser session just ended, so none of this browser's can be used again, and a
 * revocation that fails (the database is down) is logged instead of keeping the user signed in. A
 * session the store could not end still has its grants revoked before the error page: a grant must
 * not outlive a sign-out the user asked for.
 */
async function signOut(
  queries: DemoReads,
  grants: GrantReader,
  logger: KitLogger | undefined,
  req: Request,
  res: Response,
): Promise<void> {
  const user = await signedInUser(queries, req);
  const notEnded = await new Promise<unknown>((resolve) => {
    req.session.destroy((error: unknown) => resolve(error));
  });
  if (user !== undefined) {
    await grants
      .revoke({ userRef: user.id })
      .catch((error: unknown) => logDemoError(logger, 'demo: sign-out could not revoke step-up grants', error));
  }
  if (notEnded) throw notEnded;
  res.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax' });
  res.redirect(303, '/signin');
}

async function signIn(queries: DemoReads, req: Request, res: Response, next: NextFunction): Promise<void> {
  const userId = (req.body as Record<string, unknown> | undefined)?.userId;
  const user = typeof userId === 'string' ? await queries.user(userId) : undefined;
  if (!demoCsrfValid(req)) {
    // Refused without creating or changing any session.
    res.status(403).setHeader('Cache-Control', 'no-store');
    res.send(errorPage({ t: demoTexts(req), status: 403, ...demoTexts(req).errors.signinRefused }));
    return;
  }
  if (user === undefined) {
    res.status(400).setHeader('Cache-Control', 'no-store');
    const t = demoTexts(req);
    const users = await queries.users();
    res.send(signinPage({ t, users, csrf: demoCsrfToken(req), error: t.signin.pickUser }));
    return;
  }
  // A new session id at sign-in (no fixation); the old session's tokens are gone with it.
  req.session.regenerate((error) => {
    if (error) return next(error);
    req.session.userId = user.id;
    req.session.save((saveError) => (saveError ? next(saveError) : res.redirect(303, '/')));
  });
}
