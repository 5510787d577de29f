/**
 * Step-up grants and intents in PostgreSQL. A grant replaces the older ones of its user, scope,
 * resource and browser session in one BEGIN ... COMMIT (the caller's client, or its own); an intent is
 * consumed (its fields cleared) by one conditional UPDATE on the row it locks, so only one caller
 * on any instance gets it; a user's intents are kept one at a time (an advisory lock), so the cap holds,
 * and a revocation takes the same lock, so no form kept before it returns outlives it.
 */
import type { PoolClient } from 'pg';
import { inTransaction, query, queryOn, type PostgresDb } from './postgres-query.ts';
import type {
  IntentReplacement,
  NewStepUpIntent,
  SessionGrantQuery,
  StepUpGrant,
  StepUpIntent,
  StepUpStore,
  UserGrantQuery,
} from '../types.ts';

/** A time bound left out: every grant's start and grant time is at or after it. */
const NO_BOUND = Number.MIN_SAFE_INTEGER;

interface GrantRow {
  session_id: string;
  user_ref: string;
  scope: string;
  resource_key: string;
  browser_session: string;
  started_at: string;
  granted_at: string;
}

interface IntentRow {
  intent_id: string;
  user_ref: string;
  scope: string;
  browser_session: string;
  resource_key: string;
  method: string;
  path: string;
  fields: StepUpIntent['fields'];
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

function toGrant(row: GrantRow): StepUpGrant {
  return {
    sessionId: row.session_id,
    userRef: row.user_ref,
    scope: row.scope,
    resourceKey: row.resource_key,
    browserSession: row.browser_session,
    startedAt: Number(row.started_at),
    grantedAt: Number(row.granted_at),
  };
}

function toIntent(row: IntentRow): StepUpIntent {
  return {
    intentId: row.intent_id,
    userRef: row.user_ref,
    scope: row.scope,
    browserSession: row.browser_session,
    resourceKey: row.resource_key,
    method: row.method,
    path: row.path,
    fields: row.fields,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
  };
}

async function replaceOlderGrants(client: PoolClient, grant: StepUpGrant): Promise<void> {
  const { sessionId, userRef, scope, resourceKey, browserSession, startedAt, grantedAt } = grant;
  await queryOn(client, 'deleteOlderGrants', [userRef, scope, resourceKey, browserSession, startedAt, sessionId]);
  await queryOn(client, 'insertGrant', [sessionId, userRef, scope, resourceKey, browserSession, startedAt, grantedAt]);
}

/** Stores `intent` unless its user has `maxLive` live ones (under lockUserIntents): true when stored. */
async function keptIntent(client: PoolClient, intent: NewStepUpIntent, maxLive: number): Promise<boolean> {
  const inserted = await queryOn(client, 'insertIntent', [
    intent.intentId,
    intent.userRef,
    intent.scope,
    intent.browserSession,
    intent.resourceKey,
    intent.method,
    intent.path,
    JSON.stringify(intent.fields),
    intent.createdAt,
    intent.expiresAt,
    maxLive,
  ]);
  return inserted.rowCount === 1;
}

/** Thrown to roll back a replacement refused at the limit. */
const REFUSED = new Error('refused at the limit');

function userGrants(db: PostgresDb, { userRef, scope, limit }: UserGrantQuery) {
  return query<GrantRow>(db, 'listGrants', [userRef, scope ?? null, limit]);
}

function sessionGrants(db: PostgresDb, grants: SessionGrantQuery) {
  const { userRef, scope, browserSession, resourceKey, limit } = grants;
  const bounds = [grants.startedSince ?? NO_BOUND, grants.grantedSince ?? NO_BOUND];
  return resourceKey === undefined
    ? query<GrantRow>(db, 'listSessionGrants', [userRef, scope, browserSession, ...bounds, limit])
    : query<GrantRow>(db, 'listResourceGrants', [userRef, scope, browserSession, resourceKey, ...bounds, limit]);
}

/** An intent's keeping in place of another, and a page's, each one transaction under the user's lock. */
function intentWrites(db: PostgresDb): Pick<StepUpStore, 'replaceIntent' | 'keepPageIntent'> {
  return {
    async replaceIntent(replacement, replacedId, maxLive) {
      try {
        return await inTransaction(db, async (client): Promise<IntentReplacement> => {
          await queryOn(client, 'lockUserIntents', [replacement.userRef]);
          const used = await queryOn(client, 'consumeIntent', [replacedId, replacement.createdAt]);
          if (used.rowCount === 0) return 'used';
          // Refused at the limit: the throw rolls back the use of the replaced one.
          if (!(await keptIntent(client, replacement, maxLive))) throw REFUSED;
          return 'replaced';
        });
      } catch (error) {
        if (error === REFUSED) return 'refused';
        throw error;
      }
    },
    keepPageIntent(intent, maxLive) {
      // Under the user's lock, as a keep takes it: the same page asked for at once keeps one intent.
      return inTransaction(db, async (client) => {
        await queryOn(client, 'lockUserIntents', [intent.userRef]);
        const { userRef, scope, browserSession, resourceKey, path, createdAt, expiresAt } = intent;
        const values = [userRef, scope, browserSession, resourceKey, path, createdAt, expiresAt];
        const { rows } = await queryOn<{ intent_id: string }>(client, 'renewPageIntent', values);
        if (rows[0] !== undefined) return rows[0].intent_id;
        return (await keptIntent(client, intent, maxLive)) ? intent.intentId : false;
      });
    },
  };
}

export function postgresStepUp(db: PostgresDb): StepUpStore {
  return {
    insertGrant: (grant) => inTransaction(db, (client) => replaceOlderGrants(client, grant)),
    async listGrants(grants) {
      const { rows } = await ('browserSession' in grants ? sessionGrants(db, grants) : userGrants(db, grants));
      return rows.map(toGrant);
    },
    revokeGrants({ userRef, scope, now }) {
      // Under the user's lock, as a keep takes it: a keep under way commits first, and its form goes too.
      return inTransaction(db, async (client) => {
        await queryOn(client, 'lockUserIntents', [userRef]);
        return (await queryOn(client, 'revokeGrants', [userRef, scope ?? null, now])).rowCount ?? 0;
      });
    },
    insertIntent(intent, maxLive) {
      // Under the user's lock: without it, concurrent keeps each count the same rows and all insert.
      return inTransaction(db, async (client) => {
        await queryOn(client, 'lockUserIntents', [intent.userRef]);
        return keptIntent(client, intent, maxLive);
      });
    },
    ...intentWrites(db),
    async renewPageIntent({ userRef, scope, browserSession, resourceKey, path, now, expiresAt }) {
      const values = [userRef, scope, browserSession, resourceKey, path, now, expiresAt];
      const { rows } = await query<{ intent_id: string }>(db, 'renewPageIntent', values);
      return rows[0]?.intent_id;
    },
    async findIntent(intentId) {
      const { rows } = await query<IntentRow>(db, 'findIntent', [intentId]);
      return rows[0] === undefined ? undefined : toIntent(rows[0]);
    },
    async consumeIntent(intentId, now) {
      const { rows } = await query<IntentRow>(db, 'consumeIntent', [intentId, now]);
      return rows[0] === undefined ? undefined : toIntent(rows[0]);
    },
    async purgeExpiredIntents({ now, limit }) {
      return (await query(db, 'purgeExpiredIntents', [now, limit])).rowCount ?? 0;
    },
    async purgeStaleGrants({ startedBefore, limit }) {
      return (await query(db, 'purgeStaleGrants', [startedBefore, limit])).rowCount ?? 0;
    },
  };
}
