/**
 * What a step-up guard reads from a request before it decides: the resource key its `bindTo`
 * names, and whose grants it judges the request by.
 */
import type { Request } from 'express';
import { KitError, KitErrorCode } from '../errors.ts';
import { withHookDeadline } from '../routes/hook-deadline.ts';
import type { Guarded } from './guard-note.ts';
import { assertResourceKey, boundResourceKey, refuseIllFormedKey } from './resource-key.ts';
import type { GrantReading } from './session-grants.ts';

/** A guarded address the guard cannot keep: not a same-origin path, or naming a resource no store can keep. */
export function unconfirmable(): KitError {
  return new KitError(
    KitErrorCode.InvalidActionParams,
    'This address cannot be confirmed; open the page from the site.',
  );
}

/** The resource key `bindTo` reads from the request, as grants and kept requests are bound to it ('' for none). */
export async function resourceKeyOf<Tx>({ context, guard }: Guarded<Tx>, req: Request): Promise<string> {
  const { bindTo } = guard;
  if (bindTo === undefined) return '';
  const key = await withHookDeadline(context, 'bindTo', () => bindTo(req));
  if (key === undefined) return '';
  assertResourceKey(key, guard.scope.name, req);
  // Read from the request (`%00` in a path), and PostgreSQL cannot keep it: refused on every store alike.
  if (key.includes('\0')) throw unconfirmable();
  refuseIllFormedKey(key);
  return boundResourceKey(key);
}

/** The grants this guard reads: the user's, of its scope, in this browser session. */
export function readingOf<Tx>({ guard }: Guarded<Tx>, userRef: string, browserSession: string): GrantReading {
  return { stepUp: guard.stepUp, scope: guard.scope.name, userRef, browserSession };
}
