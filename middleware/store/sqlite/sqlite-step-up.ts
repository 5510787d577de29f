/**
 * Step-up grants and intents in SQLite. A grant replaces the older ones of its user, scope,
 * resource and browser session in one IMMEDIATE transaction (the caller's, or its own); an
 * intent is read and consumed (its fields cleared) in one IMMEDIATE transaction, by a conditional
 * UPDATE, so only one caller on any process gets it.
 */
import type { Database } from 'better-sqlite3';
import { prepareAll, STEP_UP_SQL } from './sqlite-sql.ts';
import type {
  IntentReplacement,
  SessionGrantQuery,
  StepUpGrant,
  StepUpIntent,
  StepUpStore,
  UserGrantQuery,
} from '../types.ts';

/** Thrown to roll back a replacement refused at the limit. */
const REFUSED = Symbol('refused at the limit');

/** A time bound left out: every grant's start and grant time is at or after it. */
const NO_BOUND = Number.MIN_SAFE_INTEGER;

interface GrantRow {
  session_id: string;
  user_ref: string;
  scope: string;
  resource_key: string;
  browser_session: string;
  started_at: number;
  granted_at: number;
}

interface IntentRow {
  intent_id: string;
  user_ref: string;
  scope: string;
  browser_session: string;
  resource_key: string;
  method: string;
  path: string;
  fields: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

function toGrant(row: GrantRow): StepUpGrant {
  return {
    sessionId: row.session_id,
    userRef: row.user_ref,
    scope: row.scope,
    resourceKey: row.resource_key,
    browserSession: row.browser_session,
    startedAt: row.started_at,
    grantedAt: row.granted_at,
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
    fields: JSON.parse(row.fields),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    consumedAt: row.consumed_at,
  };
}

type StepUpStatements = ReturnType<typeof prepareAll<typeof STEP_UP_SQL>>;

function userGrants(statements: StepUpStatements, { userRef, scope, limit }: UserGrantQuery) {
  return statements.listGrants.all({ userRef, scope: scope ?? null, limit });
}

function sessionGrants(statements: StepUpStatements, query: SessionGrantQuery) {
  const { userRef, scope, browserSession, resourceKey, limit } = query;
  const bounds = { startedSince: query.startedSince ?? NO_BOUND, grantedSince: query.grantedSince ?? NO_BOUND };
  const row = { userRef, scope, browserSession, limit, ...bounds };
  return resourceKey === undefined
    ? statements.listSessionGrants.all(row)
    : statements.listResourceGrants.all({ ...row, resourceKey });
}

/** An intent's keeping, in place of another or as a page's (as IMMEDIATE transactions, with `.immediate`). */
function intentWrites(db: Database, statements: StepUpStatements) {
  const writeIntent = db.transaction((row: Record<string, unknown>) => {
    statements.deleteExpiredIntents.run({ userRef: row.userRef, createdAt: row.createdAt });
    return statements.insertIntent.run(row).changes === 1;
  });
  // A replacement refused at the limit rolls back the use of the one it replaces.
  const replace = db.transaction((row: Record<string, unknown>, replacedId: string): IntentReplacement => {
    if (statements.consumeIntent.run({ intentId: replacedId, now: row.createdAt }).changes === 0) return 'used';
    if (!writeIntent(row)) throw REFUSED;
    return 'replaced';
  });
  const replaceIntent: StepUpStore['replaceIntent'] = async (replacement, replacedId, maxLive) => {
    try {
      return replace.immediate({ ...replacement, fields: JSON.stringify(replacement.fields), maxLive }, replacedId);
    } catch (error) {
      if (error === REFUSED) return 'refused';
      throw error;
    }
  };
  // The page's intent renewed, or one kept, in one IMMEDIATE transaction: requests at once keep one.
  const keepPage = db.transaction((row: Record<string, unknown>): string | false => {
    const { userRef, scope, browserSession, resourceKey, path, createdAt, expiresAt } = row;
    const query = { userRef, scope, browserSession, resourceKey, path, now: createdAt, expiresAt };
    const renewed = statements.renewPageIntent.get(query) as { intent_id: string } | undefined;
    if (renewed !== undefined) return renewed.intent_id;
    return writeIntent(row) ? (row.intentId as string) : false;
  });
  const keepPageIntent: StepUpStore['keepPageIntent'] = async (intent, maxLive) =>
    keepPage.immediate({ ...intent, fields: JSON.stringify(intent.fields), maxLive });
  return { writeIntent, replaceIntent, keepPageIntent };
}

export function sqliteStepUp(db: Database): StepUpStore {
  const statements = prepareAll(db, STEP_UP_SQL);
  const { writeIntent, replaceIntent, keepPageIntent } = intentWrites(db, statements);
  const revoke = db.transaction((query: { userRef: string; scope: string | null; now: number }) => {
    statements.recordRevocation.run(query);
    statements.revokeIntents.run(query);
    return statements.revokeGrants.run(query).changes;
  });
  // RETURNING gives the values after the UPDATE: the fields it clears are read first, in the same transaction.
  const consume = db.transaction((intentId: string, now: number) => {
    const row = statements.findIntent.get(intentId) as IntentRow | undefined;
    if (row === undefined || statements.consumeIntent.run({ intentId, now }).changes === 0) return undefined;
    return toIntent({ ...row, consumed_at: now });
  });
  const replaceOlderGrants = db.transaction((grant: StepUpGrant) => {
    statements.deleteOlderGrants.run(grant);
    statements.insertGrant.run(grant);
  });
  return {
    async insertGrant(grant) {
      replaceOlderGrants.immediate(grant);
    },
    async listGrants(query) {
      const rows = (
        'browserSession' in query ? sessionGrants(statements, query) : userGrants(statements, query)
      ) as GrantRow[];
      return rows.map(toGrant);
    },
    async revokeGrants({ userRef, scope, now }) {
      return revoke.immediate({ userRef, scope: scope ?? null, now });
    },
    async insertIntent(intent, maxLive) {
      return writeIntent.immediate({ ...intent, fields: JSON.stringify(intent.fields), maxLive });
    },
    replaceIntent,
    keepPageIntent,
    async renewPageIntent(query) {
      const row = statements.renewPageIntent.get(query) as { intent_id: string } | undefined;
      return row?.intent_id;
    },
    async findIntent(intentId) {
      const row = statements.findIntent.get(intentId) as IntentRow | undefined;
      return row === undefined ? undefined : toIntent(row);
    },
    async consumeIntent(intentId, now) {
      return consume.immediate(intentId, now);
    },
    async purgeExpiredIntents({ now, limit }) {
      return statements.purgeExpiredIntents.run({ now, limit }).changes;
    },
    async purgeStaleGrants({ startedBefore, limit }) {
      return statements.purgeStaleGrants.run({ startedBefore, limit }).changes;
    },
  };
}
