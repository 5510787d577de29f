/** kit.grants: a user's step-up grants for a support screen, and their revocation. */
import type { StepUpStore } from '../store/types.ts';

/** A grant as a support screen sees it (without the browser session it is bound to). */
export interface GrantSummary {
  scope: string;
  /** '' when the guard binds to no resource. */
  resourceKey: string;
  /** The verification that made it. */
  sessionId: string;
  /** Its age anchor: when that verification was started (ms). */
  startedAt: number;
  grantedAt: number;
}

export interface GrantReader {
  /** A user's grants, newest first (of one scope when given). */
  list(query: { userRef: string; scope?: string; limit?: number }): Promise<GrantSummary[]>;
  /**
   * Revokes a user's grants (of one scope when given): call it on sign-out, a changed phone number
   * or a changed password. A verification started before and completed after it grants nothing.
   * Returns how many were revoked.
   */
  revoke(query: { userRef: string; scope?: string }): Promise<number>;
}

export function createGrantReader(stepUp: StepUpStore | undefined, now: () => number): GrantReader {
  const store = (): StepUpStore => {
    if (stepUp === undefined)
      throw new Error('kit.grants: this store keeps no step-up grants (use the SQLite or PostgreSQL store).');
    return stepUp;
  };
  return {
    async list({ userRef, scope, limit = 50 }) {
      const grants = await store().listGrants({ userRef, ...(scope === undefined ? {} : { scope }), limit });
      return grants.map(({ scope: s, resourceKey, sessionId, startedAt, grantedAt }) => ({
        scope: s,
        resourceKey,
        sessionId,
        startedAt,
        grantedAt,
      }));
    },
    revoke: (query) => store().revokeGrants({ ...query, now: now() }),
  };
}
