/**
 * kit.grants: a user's step-up grants for a support screen, and their revocation. Its arguments are
 * checked when it is called: a sign-out handler revoking a misspelt scope would revoke nothing and
 * report success, and a list without a userRef would answer as if the user had no grant.
 */
import { KitError, KitErrorCode } from '../errors.ts';
import { quote } from '../options/option-problems.ts';
import type { StepUpStore } from '../store/types.ts';
import type { ScopeDefinition } from '../types.ts';
import { scopeProblem } from './guard-options.ts';
import { checkedGrants } from './session-grants.ts';

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

/** The most grants one list returns. */
const MAX_LIMIT = 500;

/** A refused call, named so the message says which call to fix. */
function invalid(call: 'list' | 'revoke', problem: string): KitError {
  return new KitError(KitErrorCode.InvalidOptions, `kit.grants.${call}: ${problem}`);
}

/** Throws naming the fix unless `query` is a user's query, of a declared scope when it names one. */
function checkQuery(
  call: 'list' | 'revoke',
  query: unknown,
  scopes: ReadonlyMap<string, ScopeDefinition>,
): asserts query is { userRef: string; scope?: string; limit?: number } {
  if (typeof query !== 'object' || query === null) {
    throw invalid(
      call,
      `pass { userRef, scope? }, e.g. kit.grants.${call}({ userRef: user.userRef }): got ${quote(query)}.`,
    );
  }
  const { userRef, scope, limit } = query as Record<string, unknown>;
  if (typeof userRef !== 'string' || userRef === '') {
    throw invalid(
      call,
      `\`userRef\` must be the user's userRef (a non-empty string, as your resolveUser returns it): got ${quote(userRef)}.`,
    );
  }
  if (scope !== undefined) {
    // A kit that declares no scopes (a sweep job's or a worker's, sharing the app's configuration)
    // cannot tell a typo from a scope of the web kit: a name is all it can ask for.
    const scopeWrong =
      scopes.size > 0
        ? scopeProblem(scopes, scope)
        : typeof scope === 'string' && scope !== ''
          ? undefined
          : `must be a scope's name: got ${quote(scope)}.`;
    if (scopeWrong !== undefined) throw invalid(call, `\`scope\` ${scopeWrong} Leave it out for every scope.`);
  }
  if (limit !== undefined && (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_LIMIT)) {
    throw invalid(call, `\`limit\` must be a whole number from 1 to ${MAX_LIMIT}: got ${quote(limit)}.`);
  }
}

export function createGrantReader(
  stepUp: StepUpStore | undefined,
  now: () => number,
  scopes: ReadonlyMap<string, ScopeDefinition>,
): GrantReader {
  const store = (): StepUpStore => {
    if (stepUp === undefined)
      throw new Error('kit.grants: this store keeps no step-up grants (use the SQLite or PostgreSQL store).');
    return stepUp;
  };
  return {
    async list(query) {
      checkQuery('list', query, scopes);
      const { userRef, scope, limit = 50 } = query;
      const grants = checkedGrants(
        await store().listGrants({ userRef, ...(scope === undefined ? {} : { scope }), limit }),
      );
      return grants.map(({ scope: s, resourceKey, sessionId, startedAt, grantedAt }) => ({
        scope: s,
        resourceKey,
        sessionId,
        startedAt,
        grantedAt,
      }));
    },
    async revoke(query) {
      checkQuery('revoke', query, scopes);
      const { userRef, scope } = query;
      return store().revokeGrants({ userRef, ...(scope === undefined ? {} : { scope }), now: now() });
    },
  };
}
