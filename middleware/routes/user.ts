/** The signed-in user, as the integrator's `resolveUser` reports them; null when nobody is signed in. */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import { withDeadline } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import type { ResolvedUser } from '../options/options.ts';

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
