/**
 * A revocation on PostgreSQL judged by the store's own order, not by the instances' clocks: a
 * verification started before it grants nothing when it completes afterwards, even when the
 * instance that started it runs ahead of the one that revoked; one started after it grants.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { StepUpGrant } from '../../middleware/store/types.ts';
import { newAttempt } from '../support/attempts.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

let database: TestDatabase;
let store: PostgresStore;

/** A verification of `user-1` for `security` started at `startedAt` by its instance's clock. */
async function started(n: number, startedAt: number): Promise<void> {
  await store.insertAttempt(newAttempt(n, { userRef: 'user-1', action: 'security', createdAt: startedAt }));
}

/** Its grant, written when it completes. */
async function granted(n: number, startedAt: number): Promise<void> {
  const grant: StepUpGrant = {
    sessionId: `session-${n}`,
    userRef: 'user-1',
    scope: 'security',
    resourceKey: '',
    browserSession: 'browser-1',
    startedAt,
    grantedAt: 2_000_000,
  };
  await store.stepUp!.insertGrant(grant);
}

const listed = async () =>
  (await store.stepUp!.listGrants({ userRef: 'user-1', limit: 10 })).map((grant) => grant.sessionId);

describe.skipIf(postgresUnavailable !== undefined)(
  'a revocation and instances whose clocks differ, on PostgreSQL',
  () => {
    beforeEach(async () => {
      database = await createTestDatabase();
      store = createPostgresStore({ pool: database.pool });
      await store.ready;
    });
    afterEach(async () => {
      await store.close();
      await database.drop();
    });

    it('a verification started before it, on an instance a minute ahead, grants nothing; one started after it grants', async () => {
      await started(1, 1_060_000);
      // The sign-out, a moment later, on an instance whose clock reads a minute earlier.
      await store.stepUp!.revokeGrants({ userRef: 'user-1', scope: 'security', now: 1_000_000 });
      await granted(1, 1_060_000);
      expect(await listed()).toEqual([]);
      await started(2, 1_000_500);
      await granted(2, 1_000_500);
      expect(await listed()).toEqual(['session-2']);
    });
  },
);
