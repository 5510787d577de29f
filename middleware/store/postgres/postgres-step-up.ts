/**
 * Step-up grants and intents in PostgreSQL. A grant replaces the older ones of its user, scope,
 * resource and browser session in one BEGIN ... COMMIT (the caller's client, or its own); an intent is
 * consumed (its fields cleared) by one conditional UPDATE on the row it locks, so only one caller
 * on any instance gets it; a user's intents are kept one at a time (an advisory lock), so the cap holds.
 */
import type { PoolClient } from 'pg';
import { inTransaction, query, queryOn, type PostgresDb } from './postgres-query.ts';
import type { StepUpGrant, StepUpIntent, StepUpStore } from '../types.ts';

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
  await queryOn(client, 'deleteOlderGrants', [userRef, scope, resourceKey, browserSession, startedAt]);
  await queryOn(client, 'insertGrant', [sessionId, userRef, scope, resourceKey, browserSession, startedAt, grantedAt]);
}

export function postgresStepUp(db: PostgresDb): StepUpStore {
  return {
    insertGrant: (grant) => inTransaction(db, (client) => replaceOlderGrants(client, grant)),
    async listGrants({ userRef, scope, limit }) {
      const { rows } = await query<GrantRow>(db, 'listGrants', [userRef, scope ?? null, limit]);
      return rows.map(toGrant);
    },
    async revokeGrants({ userRef, scope, now }) {
      return (await query(db, 'revokeGrants', [userRef, scope ?? null, now])).rowCount ?? 0;
    },
    insertIntent(intent, maxLive) {
      // Under the user's lock: without it, concurrent keeps each count the same rows and all insert.
      return inTransaction(db, async (client) => {
        await queryOn(client, 'lockUserIntents', [intent.userRef]);
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
      });
    },
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
