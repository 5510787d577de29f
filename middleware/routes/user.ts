/** The signed-in user, as the integrator's `resolveUser` reports them; null when nobody is signed in. */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import { withHookDeadline } from './hook-deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import type { ResolvedUser } from '../options/options.ts';

/** What express-session puts on a request: the session, its id and the store it came from. */
interface ExpressSession {
  session?: { regenerate?: (done: (error?: unknown) => void) => void };
  sessionID?: unknown;
  sessionStore?: { get?: (id: string, done: (error: unknown, data?: unknown) => void) => void };
}

/**
 * True when the request came with a session that its store no longer has: destroyed (a sign-out)
 * while this request worked. A session the request did not come with is new: nothing to bring back.
 */
async function sessionDestroyedMeanwhile(req: Request): Promise<boolean> {
  const { sessionID: id, sessionStore: store } = req as Request & ExpressSession;
  const get = store?.get?.bind(store);
  if (typeof id !== 'string' || id === '' || get === undefined) return false;
  const cookies = req.headers.cookie ?? '';
  if (!cookies.includes(id) && !cookies.includes(encodeURIComponent(id))) return false;
  // A store that cannot answer cannot vouch for it either.
  return new Promise((resolve) =>
    get(id, (error, data) => resolve((error !== undefined && error !== null) || data == null)),
  );
}

/**
 * For a request that worked a while (the landing reads the service first), before it reads the
 * signed-in user or writes into the session: a sign-out meanwhile destroyed the session in its
 * store, and the copy loaded when the request came in, saved at its end, would bring it back
 * (whatever the store). It is replaced by a new empty one, so this request is answered as signed
 * out and nothing of the old session is written. Only the store is read: what earlier middleware
 * put in the session stays.
 */
export async function renewSessionIfDestroyed<Tx>(
  context: Pick<KitContext<Tx>, 'hookTimeouts' | 'logger'>,
  req: Request,
): Promise<void> {
  // The session store is the app's: one that never answers fails this request like a late resolveUser.
  if (!(await withHookDeadline(context, 'resolveUser', () => sessionDestroyedMeanwhile(req)))) return;
  const { session } = req as Request & ExpressSession;
  // regenerate() destroys the id (already gone) and hands the request a new, empty session.
  const renewed = await withHookDeadline(
    context,
    'resolveUser',
    () =>
      new Promise<boolean>((resolve) =>
        session?.regenerate === undefined
          ? resolve(false)
          : session.regenerate((error) => resolve(error === undefined || error === null)),
      ),
  );
  if (!renewed) {
    throw new Error(
      'express-session could not start a new session in place of one its store no longer has; check the session store.',
    );
  }
}

export async function currentUser<Tx>(
  context: Pick<KitContext<Tx>, 'resolveUser' | 'hookTimeouts' | 'logger'>,
  req: Request,
): Promise<ResolvedUser | null> {
  const user = await withHookDeadline(context, 'resolveUser', () => context.resolveUser(req));
  if (user === null || user === undefined) return null;
  if (typeof user.userRef !== 'string' || user.userRef === '' || typeof user.destination !== 'string') {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'resolveUser must return { userRef: non-empty string, destination: string } or null.',
    );
  }
  return user;
}
