/**
 * Step-up grants' and intents' statements (postgres-step-up.ts). Part of the store's statements
 * (postgres-sql.ts, which names each after `verify_kit_`).
 */

const GRANT_COLUMNS = 'session_id, user_ref, scope, resource_key, browser_session, started_at, granted_at';
// Started at or before a revocation by the clocks, or before it in the store's start order: an
// instance whose clock runs ahead of the revoking one's gives a verification started before it a
// later start time. (A revocation an older kit recorded has no place in that order: its time alone.)
const NOT_REVOKED = `NOT EXISTS (SELECT 1 FROM verify_kit_grant_revocations AS r
         WHERE r.user_ref = g.user_ref AND r.scope IN (g.scope, '') AND (r.revoked_at >= g.started_at
           OR r.revoked_seq >= (SELECT a.start_seq FROM verify_kit_attempts AS a WHERE a.session_id = g.session_id)))`;
const INTENT_COLUMNS = `intent_id, user_ref, scope, browser_session, resource_key, method, path, fields, created_at,
  expires_at, consumed_at`;

/** Step-up grants and intents (postgres-step-up.ts). */
export const STEP_UP_SQL = {
  // Never the grant's own row: its landing reloaded writes it again, and it is kept as it is.
  deleteOlderGrants: `DELETE FROM verify_kit_grants WHERE user_ref = $1 AND scope = $2 AND resource_key = $3
     AND browser_session = $4 AND started_at <= $5 AND session_id <> $6`,
  insertGrant: `INSERT INTO verify_kit_grants (${GRANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (session_id) DO NOTHING`,
  // Never a grant started at or before a revocation of its user and scope, or of all scopes (''):
  // a fulfilment may commit its grant after a revocation that committed while it ran.
  listGrants: `SELECT ${GRANT_COLUMNS} FROM verify_kit_grants AS g
     WHERE g.user_ref = $1 AND ($2::text IS NULL OR g.scope = $2) AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT $3`,
  // The guard's reads, each down verify_kit_grants_session: a browser session's grants (of one
  // resource, or of all), never a window of the user's newest that other sessions can fill.
  listResourceGrants: `SELECT ${GRANT_COLUMNS} FROM verify_kit_grants AS g
     WHERE g.user_ref = $1 AND g.scope = $2 AND g.browser_session = $3 AND g.resource_key = $4
       AND g.started_at >= $5 AND g.granted_at >= $6 AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT $7`,
  listSessionGrants: `SELECT ${GRANT_COLUMNS} FROM verify_kit_grants AS g
     WHERE g.user_ref = $1 AND g.scope = $2 AND g.browser_session = $3
       AND g.started_at >= $4 AND g.granted_at >= $5 AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT $6`,
  // The revocation is recorded, and the user's kept requests (of the scope) deleted, by the same
  // statement that deletes the grants: none runs after sign-out, no field stays.
  revokeGrants: `WITH revocation AS (
       INSERT INTO verify_kit_grant_revocations AS r (user_ref, scope, revoked_at, revoked_seq)
       SELECT $1, coalesce($2, ''), $3, CASE WHEN s.is_called THEN s.last_value ELSE 0 END
       FROM verify_kit_attempts_start_seq_seq AS s
       ON CONFLICT (user_ref, scope) DO UPDATE SET revoked_at = GREATEST(r.revoked_at, EXCLUDED.revoked_at),
         revoked_seq = GREATEST(r.revoked_seq, EXCLUDED.revoked_seq)),
     kept AS (DELETE FROM verify_kit_intents WHERE user_ref = $1 AND ($2::text IS NULL OR scope = $2))
     DELETE FROM verify_kit_grants WHERE user_ref = $1 AND ($2::text IS NULL OR scope = $2)`,
  // Taken before insertIntent and revokeGrants, in their transactions: one user's keeps queue, so each
  // counts the ones committed before it, and a revocation deletes every form kept before it (the
  // two-key form: a key space apart from the fulfilments' locks).
  lockUserIntents: `SELECT pg_advisory_xact_lock(hashtext('verify_kit_intents'), hashtext($1))`,
  // Nothing is stored (rowCount 0) while the user has $11 live intents (under lockUserIntents).
  insertIntent: `WITH expired AS (DELETE FROM verify_kit_intents WHERE user_ref = $2 AND expires_at <= $9)
     INSERT INTO verify_kit_intents (${INTENT_COLUMNS})
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL
     WHERE (SELECT count(*) FROM verify_kit_intents
       WHERE user_ref = $2 AND consumed_at IS NULL AND expires_at > $9) < $11`,
  renewPageIntent: `UPDATE verify_kit_intents SET expires_at = $7
     WHERE user_ref = $1 AND scope = $2 AND browser_session = $3 AND resource_key = $4 AND method = 'GET'
       AND path = $5 AND consumed_at IS NULL AND expires_at > $6
     RETURNING intent_id`,
  findIntent: `SELECT ${INTENT_COLUMNS} FROM verify_kit_intents WHERE intent_id = $1`,
  // The fields go with the consumption: the handler that ran them was their only use. RETURNING
  // gives the values after the UPDATE: the fields come from the row it locked first.
  consumeIntent: `WITH kept AS (
       SELECT intent_id, fields FROM verify_kit_intents
       WHERE intent_id = $1 AND consumed_at IS NULL AND expires_at > $2 FOR UPDATE)
     UPDATE verify_kit_intents AS i SET consumed_at = $2, fields = 'null'
     FROM kept WHERE i.intent_id = kept.intent_id
     RETURNING i.intent_id, i.user_ref, i.scope, i.browser_session, i.resource_key, i.method, i.path, kept.fields,
       i.created_at, i.expires_at, i.consumed_at`,
  // Sweeps on several instances share the work (both purges).
  purgeStaleGrants: `DELETE FROM verify_kit_grants WHERE session_id IN (
       SELECT session_id FROM verify_kit_grants WHERE started_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  purgeExpiredIntents: `DELETE FROM verify_kit_intents WHERE intent_id IN (
       SELECT intent_id FROM verify_kit_intents WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
} as const;
