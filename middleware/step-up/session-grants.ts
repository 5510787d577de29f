/**
 * The grants the guard judges a request by: a user's grants of one scope made in this browser
 * session (a grant never outlives it), filtered by the store's indexed query, never a window of
 * the user's newest grants, which other sessions or other resources could fill.
 */
import type { SessionGrantQuery, StepUpGrant, StepUpStore } from '../store/types.ts';
import { unreadableStoreAnswer } from './store-answers.ts';

/** Whose grants: the user's, of one scope, in one browser session. */
export interface GrantReading {
  stepUp: StepUpStore;
  scope: string;
  userRef: string;
  browserSession: string;
}

/** Which of them (all when left out). */
export type GrantFilter = Pick<SessionGrantQuery, 'resourceKey' | 'startedSince' | 'grantedSince'>;

function matches(grant: StepUpGrant, { scope, userRef, browserSession }: GrantReading, filter: GrantFilter): boolean {
  return (
    // The user too: a browser session the app kept across a sign-in holds the previous user's grants.
    grant.userRef === userRef &&
    grant.scope === scope &&
    grant.browserSession === browserSession &&
    (filter.resourceKey === undefined || grant.resourceKey === filter.resourceKey) &&
    grant.startedAt >= (filter.startedSince ?? -Infinity) &&
    grant.grantedAt >= (filter.grantedSince ?? -Infinity)
  );
}

/**
 * The grants a store listed. Anything but a list cannot be read as "none": the user would be
 * texted, granted, and asked (and texted) again, never finding the grant.
 */
export function checkedGrants(answer: unknown): StepUpGrant[] {
  if (Array.isArray(answer)) return answer as StepUpGrant[];
  throw unreadableStoreAnswer(
    'stepUp.listGrants returned',
    answer,
    'a list of grants (an empty one for none)',
    'nothing was kept or sent',
  );
}

/** The grants read, newest first; checked again here, for a store of the app's own that applies no filter. */
export async function sessionGrants(reading: GrantReading, filter: GrantFilter): Promise<StepUpGrant[]> {
  const { stepUp, scope, userRef, browserSession } = reading;
  const grants = checkedGrants(await stepUp.listGrants({ userRef, scope, browserSession, ...filter, limit: 50 }));
  return grants.filter((grant) => matches(grant, reading, filter));
}

/**
 * Whether the session holds a grant for this resource started at most `maxAgeMs` before `now`, and
 * not after it: a start ahead of this clock (another instance's running ahead, or this one's set
 * back since) gives no age, and counted fresh it would stretch maxAge by however far that clock ran.
 */
export async function hasFreshGrant(
  reading: GrantReading,
  resourceKey: string,
  { now, maxAgeMs }: { now: number; maxAgeMs: number },
): Promise<boolean> {
  const grants = await sessionGrants(reading, { resourceKey, startedSince: now - maxAgeMs });
  return grants.some((grant) => grant.startedAt <= now);
}
