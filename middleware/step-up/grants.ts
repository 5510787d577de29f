/**
 * kit.grants: a user's step-up grants for a support screen, and their revocation. Its arguments are
 * checked when it is called: a sign-out handler revoking a misspelt scope would revoke nothing and
 * report success, and a list without a userRef would answer as if the user had no grant.
 */
import { withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { quote } from '../options/option-problems.ts';
import type { StepUpStore } from '../store/types.ts';
import type { ScopeDefinition } from '../types.ts';
import { scopeProblem } from './guard-options.ts';
import { shownResourceKey } from './resource-key.ts';
import { checkedGrants } from './session-grants.ts';

/** A grant as a support screen sees it (without the browser session it is bound to). */
export interface GrantSummary {
  scope: string;
  /**
   * '' when the guard binds to no resource; a key that may be a phone number masked ("•• 23"), as
   * the outcome event shows it; a long key's digest as `sha256:<digest>`.
   */
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
   * or a changed password. A verification started before and completed after it grants nothing, and
   * the user's kept requests (of that scope) are deleted with their fields: none runs afterwards.
   * Returns how many were revoked. Like list, it rejects with `store_unavailable` when the store
   * does not answer within hookTimeouts.store (the revoke may still apply later).
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

/** How long a call waits on the store (hookTimeouts.store), and who is told why it failed after that. */
export interface GrantStoreDeadline {
  timeoutMs: number;
  onLateRejection: LateRejectionReporter;
}

/**
 * The store's answer to `call`, waited on for `timeoutMs` at most: the app's sign-out awaits it, and
 * a store that never answers must not hold that open for good. A late revoke may still apply.
 */
function storeAnswer<T>(call: 'list' | 'revoke', deadline: GrantStoreDeadline, ask: () => Promise<T>): Promise<T> {
  const { timeoutMs, onLateRejection } = deadline;
  const late = () =>
    new KitError(
      KitErrorCode.StoreUnavailable,
      `kit.grants.${call}() did not get the store's answer within ${timeoutMs} ms (raise hookTimeouts.store if the store needs longer)${call === 'revoke' ? '; the grants may or may not be revoked, so call it again' : ''}.`,
    );
  return withDeadline(`kit.grants.${call}()`, timeoutMs, ask, { late, onLateRejection });
}

export function createGrantReader(
  stepUp: StepUpStore | undefined,
  now: () => number,
  scopes: ReadonlyMap<string, ScopeDefinition>,
  deadline: GrantStoreDeadline,
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
        await storeAnswer('list', deadline, () =>
          store().listGrants({ userRef, ...(scope === undefined ? {} : { scope }), limit }),
        ),
      );
      return grants.map(({ scope: s, resourceKey, sessionId, startedAt, grantedAt }) => ({
        scope: s,
        resourceKey: shownResourceKey(resourceKey),
        sessionId,
        startedAt,
        grantedAt,
      }));
    },
    async revoke(query) {
      checkQuery('revoke', query, scopes);
      const { userRef, scope } = query;
      return storeAnswer('revoke', deadline, () =>
        store().revokeGrants({ userRef, ...(scope === undefined ? {} : { scope }), now: now() }),
      );
    },
  };
}
