/** The signed-in user, as the integrator's `resolveUser` reports them; null when nobody is signed in. */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import { withDeadline } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import type { ResolvedUser } from '../options/options.ts';

/** express-session's session: reload() reads it again from its store. */
interface ReloadableSession {
  reload(done: (error?: unknown) => void): void;
  regenerate(done: (error?: unknown) => void): void;
}

function reloadableSessionOf(req: Request): ReloadableSession | undefined {
  const session = (req as Request & { session?: Partial<ReloadableSession> }).session;
  const reloadable = typeof session?.reload === 'function' && typeof session.regenerate === 'function';
  return reloadable ? (session as ReloadableSession) : undefined;
}

function settle(run: (done: (error?: unknown) => void) => void): Promise<boolean> {
  return new Promise((resolve) => run((error) => resolve(error === undefined || error === null)));
}

/**
 * The signed-in user as the session's store has it now, for a request that worked a while (the
 * landing reads the service first). The session is read again from its store: a sign-out meanwhile
 * destroyed it there, and the copy loaded when the request came in, written to and saved at the
 * end, would bring it back. Gone, it is replaced by a new empty one: this request is answered as
 * signed out, and nothing of the old one is written (whatever the store).
 */
export async function currentUserNow<Tx>(
  context: Pick<KitContext<Tx>, 'resolveUser' | 'hookTimeouts'>,
  req: Request,
): Promise<ResolvedUser | null> {
  const session = reloadableSessionOf(req);
  if (session !== undefined && !(await settle((done) => session.reload(done)))) {
    // regenerate() destroys the id (already gone) and hands the request a fresh, empty session.
    if (!(await settle((done) => session.regenerate(done)))) {
      throw new Error(
        'express-session could not start a new session in place of one its store no longer has; check the session store.',
      );
    }
  }
  return currentUser(context, req);
}

export async function currentUser<Tx>(
  context: Pick<KitContext<Tx>, 'resolveUser' | 'hookTimeouts'>,
  req: Request,
): Promise<ResolvedUser | null> {
  const user = await withDeadline('resolveUser', context.hookTimeouts.resolveUser, () => context.resolveUser(req));
  if (user === null || user === undefined) return null;
  if (typeof user.userRef !== 'string' || user.userRef === '' || typeof user.destination !== 'string') {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'resolveUser must return { userRef: non-empty string, destination: string } or null.',
    );
  }
  return user;
}
