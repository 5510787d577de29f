/**
 * The statements and the routine of the SMS pumping counters (postgres-pumping.ts), part of the
 * store's statements (postgres-sql.ts, which names each after `verify_kit_`). An hour is ms since
 * the epoch / 3,600,000.
 */
import { routine } from './postgres-routine.ts';

/**
 * Each key's counts ($1 dimensions, $2 keys, $3 hour) as one JSON array of nine numbers (sent and
 * verified this hour, the hour before, the last 24 hours; the most verified in one of days 1 to 13,
 * for the keys flagged in $7, else null: read earlier this hour; refused this hour and the hour
 * before), in the keys' order: arrays, not objects, as PostgreSQL builds and the app parses them
 * faster (postgres-pumping.ts reads them by position).
 */
const KEY_COUNTS = `(SELECT coalesce(json_agg(json_build_array(c.sent_this_hour, c.verified_this_hour,
           c.sent_last_hour, c.verified_last_hour, c.sent_last_day, c.verified_last_day, m.max_day,
           c.refused_this_hour, c.refused_last_hour) ORDER BY k.ord), '[]'::json)
        FROM unnest($1::text[], $2::text[], $7::boolean[]) WITH ORDINALITY AS k(dimension, key, need, ord)
        CROSS JOIN LATERAL (SELECT
            coalesce(sum(p.sent) FILTER (WHERE p.hour = $3), 0) AS sent_this_hour,
            coalesce(sum(p.verified) FILTER (WHERE p.hour = $3), 0) AS verified_this_hour,
            coalesce(sum(p.sent) FILTER (WHERE p.hour = $3 - 1), 0) AS sent_last_hour,
            coalesce(sum(p.verified) FILTER (WHERE p.hour = $3 - 1), 0) AS verified_last_hour,
            coalesce(sum(p.sent), 0) AS sent_last_day,
            coalesce(sum(p.verified), 0) AS verified_last_day,
            coalesce(sum(p.refused) FILTER (WHERE p.hour = $3), 0) AS refused_this_hour,
            coalesce(sum(p.refused) FILTER (WHERE p.hour = $3 - 1), 0) AS refused_last_hour
          FROM verify_kit_pumping_counts p
          WHERE p.dimension = k.dimension AND p.key = k.key AND p.hour > $3 - 24 AND p.hour <= $3) c
        CROSS JOIN LATERAL (SELECT CASE WHEN k.need THEN coalesce(max(d.v), 0) END AS max_day
          FROM (SELECT sum(p.verified) AS v FROM verify_kit_pumping_counts p
            WHERE k.need AND p.dimension = k.dimension AND p.key = k.key AND p.hour > $3 - 336 AND p.hour <= $3 - 24
            GROUP BY ($3 - p.hour) / 24) d) m)`;

/** The live rules on the keys ($1, $2; $6 now). */
const LIVE_RULES = `(SELECT coalesce(json_agg(json_build_object('dimension', r.dimension, 'key', r.key, 'rule', r.rule,
           'until', r.until, 'setAt', r.set_at)), '[]'::json)
        FROM verify_kit_pumping_rules r JOIN unnest($1::text[], $2::text[]) AS k(dimension, key)
          ON r.dimension = k.dimension AND r.key = k.key
        WHERE r.until > $6)`;

/** The address's countries without a verification ($4 "<address> ", $5 "<address>!"), and the live rules ($6 now). */
const COUNTRIES_AND_RULES = `(SELECT count(*) FROM (SELECT p.key FROM verify_kit_pumping_counts p
          WHERE p.dimension = 'address_country' AND p.key > $4 AND p.key < $5 AND p.hour > $3 - 24 AND p.hour <= $3
          GROUP BY p.key HAVING sum(p.verified) = 0 AND sum(p.sent) > 0) u)::integer,
       ${LIVE_RULES}`;

/**
 * The reading before a text in one statement: the keys' counts, the address's countries without a
 * verification, the live rules. In a routine so that its plan is made once per connection: as a
 * prepared statement, PostgreSQL planned it again at every start (the plan for five keys looked
 * cheaper than the generic one, estimated for ten), about two thirds of its time on the server;
 * the plan is the same either way.
 */
const READ_PUMPING_BODY = `
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT ${KEY_COUNTS}, ${COUNTRIES_AND_RULES};
END`;
/** The reading's routine, created by the store with its others (ROUTINES, postgres-sql.ts). */
export const READ_PUMPING = routine(
  'verify_kit_read_pumping',
  'text[], text[], integer, text, text, bigint, boolean[]',
  `(TEXT[], TEXT[], INTEGER, TEXT, TEXT, BIGINT, BOOLEAN[])
      RETURNS TABLE (counts JSON, unverified_countries INTEGER, rules JSON) LANGUAGE plpgsql STABLE
      SET plan_cache_mode = force_generic_plan AS $fn$${READ_PUMPING_BODY}
      $fn$`,
);
const READ_PUMPING_ROUTINE = READ_PUMPING.name;

/** This hour's counters of the keys ($1 dimensions, $2 keys, $3 hour) that count nothing: deleted. */
const DROP_EMPTY = `DELETE FROM verify_kit_pumping_counts AS c USING unnest($1::text[], $2::text[]) AS k(dimension, key)
    WHERE c.dimension = k.dimension AND c.key = k.key AND c.hour = $3
      AND c.sent = 0 AND c.verified = 0 AND c.refused = 0`;

/** This hour's counters of the keys ($1 dimensions, $2 keys, $3 hour) locked, in one sorted order; a missing one made at zero. */
const LOCK_COUNTS = `INSERT INTO verify_kit_pumping_counts AS c (dimension, key, hour)
  SELECT k.dimension, k.key, $3 FROM unnest($1::text[], $2::text[]) AS k(dimension, key)
    ORDER BY k.dimension, k.key
  ON CONFLICT (dimension, key, hour) DO UPDATE SET sent = c.sent`;

/**
 * What the check counts under each of its keys ($1, $2): its text ($6), else a refusal under the
 * keys $7 and $8 name (some of $1 and $2), each key in one sorted order.
 */
const ADDED = `SELECT k.dimension, k.key, CASE WHEN $6 THEN 1 ELSE 0 END AS sent,
        CASE WHEN NOT $6 AND (k.dimension, k.key) IN (SELECT * FROM unnest($7::text[], $8::text[])) THEN 1 ELSE 0 END
          AS refused
      FROM unnest($1::text[], $2::text[]) AS k(dimension, key)`;

/**
 * The count of a check, once the app has decided on its reading ($1 to $3 as the reading; $4 and
 * $5 each key's texts and refusals this hour as read; $6 true to count the text under every key,
 * else $7 and $8 the keys to count a refusal under, some of the keys read; $9 each key's headroom:
 * how many texts and refusals others may have counted under it since with the answer unchanged;
 * $10 "<address> " and $11 "<address>!", $12 the most countries the address may have texted
 * unverified, as read, with a text's answer unchanged; $13 and $14 each key's texts and refusals
 * of the hour before, as read).
 * One upsert counts it under this hour's counters of the keys and locks them, in one sorted order
 * (a missing one made), so two checks never lock shared counters in opposite orders, and holds
 * them one statement long. A text's count, when concurrent checks counted under one of them after
 * the reading beyond its headroom (this hour or the hour before), or its address has texted more
 * countries unverified than its answer holds, is undone (in its transaction: no other check saw
 * it) and it returns false; else, and for a refusal always, it stands and it returns true. A
 * refused start so counts no text another could read, and one that goes on was judged on every
 * text counted before its own, or on counts they leave its answer to. Rows that count nothing
 * (made for a refusal or an undone count) go. Unflushed, as recordSend.
 */
const COUNT_PUMPING_BODY = `
#variable_conflict use_column
DECLARE
  beyond boolean;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  WITH added AS (${ADDED}),
    c AS (
      INSERT INTO verify_kit_pumping_counts AS c (dimension, key, hour, sent, refused)
      SELECT a.dimension, a.key, $3, a.sent, a.refused FROM added a ORDER BY a.dimension, a.key
      ON CONFLICT (dimension, key, hour) DO UPDATE SET sent = c.sent + EXCLUDED.sent, refused = c.refused + EXCLUDED.refused
      RETURNING c.dimension, c.key, c.sent, c.refused)
  -- Counted since the reading: this hour, and the hour before (a check that read then and counts
  -- now is in this one's last 24 hours; one that commits after this comparison comes after it).
  -- Not for a refusal: more texts and refusals never make it a text, and a refusal counted at once
  -- takes the round trips of one that counts nothing (an operator's block), however busy its keys.
  SELECT count(*) > 0 INTO beyond FROM c
    JOIN added a ON a.dimension = c.dimension AND a.key = c.key
    JOIN unnest($1::text[], $2::text[], $4::integer[], $5::integer[], $9::integer[], $13::integer[], $14::integer[])
      AS k(dimension, key, sent, refused, headroom, sent_before, refused_before)
      ON k.dimension = c.dimension AND k.key = c.key
    LEFT JOIN verify_kit_pumping_counts b ON b.dimension = c.dimension AND b.key = c.key AND b.hour = $3 - 1
    WHERE $6 AND greatest(c.sent - a.sent - k.sent, 0) + greatest(c.refused - a.refused - k.refused, 0)
      + greatest(coalesce(b.sent, 0) - k.sent_before, 0) + greatest(coalesce(b.refused, 0) - k.refused_before, 0)
      > k.headroom;
  -- The countries the address texted unverified, its own text left out, once its counter is locked
  -- (so no other start from it counts a country until this one commits), against the most its
  -- answer holds with ($12): a text given back elsewhere must not make room for new countries.
  IF NOT beyond AND $6 THEN
    SELECT count(*) > $12 INTO beyond FROM (SELECT p.key FROM verify_kit_pumping_counts p
        WHERE p.dimension = 'address_country' AND p.key > $10 AND p.key < $11 AND p.hour > $3 - 24 AND p.hour <= $3
        GROUP BY p.key
        HAVING sum(p.verified) = 0 AND sum(p.sent) > CASE
          WHEN ('address_country', p.key) IN (SELECT * FROM unnest($1::text[], $2::text[])) THEN 1 ELSE 0 END) u;
  END IF;
  IF beyond THEN
    UPDATE verify_kit_pumping_counts AS c SET sent = c.sent - a.sent, refused = c.refused - a.refused
      FROM (${ADDED}) a WHERE c.dimension = a.dimension AND c.key = a.key AND c.hour = $3;
  END IF;
  -- A refused start adds no row but its refusal's: the rows made for it alone go (a text's count none).
  IF beyond OR NOT $6 THEN
    ${DROP_EMPTY};
  END IF;
  RETURN NOT beyond;
END`;
/** The count's routine, created by the store with its others (ROUTINES, postgres-sql.ts). */
export const COUNT_PUMPING = routine(
  'verify_kit_count_pumping',
  'text[], text[], integer, integer[], integer[], boolean, text[], text[], integer[], text, text, integer, integer[], integer[]',
  `(TEXT[], TEXT[], INTEGER, INTEGER[], INTEGER[], BOOLEAN, TEXT[], TEXT[], INTEGER[], TEXT, TEXT, INTEGER, INTEGER[], INTEGER[])
      RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan AS $fn$${COUNT_PUMPING_BODY}
      $fn$`,
);
const COUNT_PUMPING_ROUTINE = COUNT_PUMPING.name;

/**
 * The reading of a text's check that concurrent checks counted under its keys between its reading
 * and its count, beyond its headroom ($1 to $7, as the reading): this hour's counters and the hour
 * before's locked first, in a transaction the count then ends, so it waits its turn behind the
 * others instead of losing every race to a burst.
 */
const LOCK_PUMPING_BODY = `
#variable_conflict use_column
BEGIN
  ${LOCK_COUNTS};
  -- The hour before's too, where a check that read as the hour turned may still count (after this
  -- hour's: every locker takes a later hour's counters before an earlier one's).
  PERFORM 1 FROM verify_kit_pumping_counts c JOIN unnest($1::text[], $2::text[]) AS k(dimension, key)
      ON c.dimension = k.dimension AND c.key = k.key
    WHERE c.hour = $3 - 1 ORDER BY c.dimension, c.key FOR UPDATE OF c;
  RETURN QUERY SELECT ${KEY_COUNTS}, ${COUNTRIES_AND_RULES};
END`;
/** The locked reading's routine, created by the store with its others (ROUTINES, postgres-sql.ts). */
export const LOCK_PUMPING = routine(
  'verify_kit_lock_pumping',
  'text[], text[], integer, text, text, bigint, boolean[]',
  `(TEXT[], TEXT[], INTEGER, TEXT, TEXT, BIGINT, BOOLEAN[])
      RETURNS TABLE (counts JSON, unverified_countries INTEGER, rules JSON) LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan AS $fn$${LOCK_PUMPING_BODY}
      $fn$`,
);
const LOCK_PUMPING_ROUTINE = LOCK_PUMPING.name;

/**
 * The check of a start whose answer is known below limits (SureLimits: $8 daily, $9 hourly and $10
 * refusals per key, $11 countries), in one statement: its text counted first under this hour's
 * counters of the keys, which locks them in one sorted order (a missing one made), the hour
 * before's locked as the locked reading does, then the reading ($1 to $7 as readPumping; its counts
 * hold the text, the countries leave it out). Within the limits, the count stands and it returns
 * true: the start was judged on every text counted before its own. Else the count is undone before
 * the commit (no other check saw it) and its rows that count nothing go; the app decides on the
 * reading and counts with countPumping. Unflushed, as recordSend.
 */
const SURE_COUNT_PUMPING_BODY = `
#variable_conflict use_column
DECLARE
  r record;
  within boolean;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO verify_kit_pumping_counts AS c (dimension, key, hour, sent)
  SELECT k.dimension, k.key, $3, 1 FROM unnest($1::text[], $2::text[]) AS k(dimension, key)
    ORDER BY k.dimension, k.key
  ON CONFLICT (dimension, key, hour) DO UPDATE SET sent = c.sent + 1;
  PERFORM 1 FROM verify_kit_pumping_counts c JOIN unnest($1::text[], $2::text[]) AS k(dimension, key)
      ON c.dimension = k.dimension AND c.key = k.key
    WHERE c.hour = $3 - 1 ORDER BY c.dimension, c.key FOR UPDATE OF c;
  SELECT ${KEY_COUNTS} AS counts,
    (SELECT count(*) FROM (SELECT p.key FROM verify_kit_pumping_counts p
        WHERE p.dimension = 'address_country' AND p.key > $4 AND p.key < $5 AND p.hour > $3 - 24 AND p.hour <= $3
        GROUP BY p.key
        HAVING sum(p.verified) = 0 AND sum(p.sent) > CASE
          WHEN ('address_country', p.key) IN (SELECT * FROM unnest($1::text[], $2::text[])) THEN 1 ELSE 0 END) u)::integer
      AS countries,
    ${LIVE_RULES} AS rules
  INTO r;
  -- Each key's counts less the text: unverified of the last 24 hours (4, 5), of this hour (0, 1)
  -- and the whole hour before (2, 3), refusals of both (7, 8).
  within := json_array_length(r.rules) = 0 AND r.countries <= $11 AND NOT EXISTS (
    SELECT 1 FROM json_array_elements(r.counts) WITH ORDINALITY AS e(c, ord)
      JOIN unnest($8::float8[], $9::float8[], $10::float8[]) WITH ORDINALITY AS l(daily, hourly, refusals, ord)
        ON l.ord = e.ord
    WHERE (e.c->>4)::bigint - 1 - (e.c->>5)::bigint >= l.daily
      OR (e.c->>0)::bigint - 1 - (e.c->>1)::bigint + greatest((e.c->>2)::bigint - (e.c->>3)::bigint, 0) >= l.hourly
      OR (e.c->>7)::bigint + (e.c->>8)::bigint >= l.refusals);
  IF NOT within THEN
    UPDATE verify_kit_pumping_counts AS c SET sent = c.sent - 1 FROM unnest($1::text[], $2::text[]) AS k(dimension, key)
      WHERE c.dimension = k.dimension AND c.key = k.key AND c.hour = $3;
    ${DROP_EMPTY};
  END IF;
  RETURN QUERY SELECT r.counts, r.countries, r.rules, within;
END`;
/** The sure check's routine, created by the store with its others (ROUTINES, postgres-sql.ts). */
export const SURE_COUNT_PUMPING = routine(
  'verify_kit_sure_count_pumping',
  'text[], text[], integer, text, text, bigint, boolean[], double precision[], double precision[], double precision[], double precision',
  `(TEXT[], TEXT[], INTEGER, TEXT, TEXT, BIGINT, BOOLEAN[], FLOAT8[], FLOAT8[], FLOAT8[], FLOAT8)
      RETURNS TABLE (counts JSON, unverified_countries INTEGER, rules JSON, counted BOOLEAN) LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan AS $fn$${SURE_COUNT_PUMPING_BODY}
      $fn$`,
);
const SURE_COUNT_PUMPING_ROUTINE = SURE_COUNT_PUMPING.name;

/** The SMS pumping counters (postgres-pumping.ts); an hour is ms since the epoch / 3,600,000. */
export const PUMPING_SQL = {
  // Through its routine (READ_PUMPING_ROUTINE), which keeps one plan per connection.
  readPumping: `SELECT counts, unverified_countries, rules FROM ${READ_PUMPING_ROUTINE}($1, $2, $3, $4, $5, $6, $7)`,
  // The count of a check on its reading, through its routine (COUNT_PUMPING_ROUTINE).
  countPumping: `SELECT ${COUNT_PUMPING_ROUTINE}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) AS counted`,
  // The check of a start below its sure limits, read and counted in one (SURE_COUNT_PUMPING_ROUTINE).
  sureCountPumping: `SELECT counts, unverified_countries, rules, counted
     FROM ${SURE_COUNT_PUMPING_ROUTINE}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
  // The reading with its counters locked, in the check's transaction (LOCK_PUMPING_ROUTINE).
  lockPumping: `SELECT counts, unverified_countries, rules FROM ${LOCK_PUMPING_ROUTINE}($1, $2, $3, $4, $5, $6, $7)`,
  // A reserved text never sent, given back ($1 hour, $2 dimensions, $3 keys): an upsert in sorted
  // order, as the check's count, so the two never lock shared counters in opposite orders.
  releaseSend: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true))
     INSERT INTO verify_kit_pumping_counts AS c (dimension, key, hour, sent)
     SELECT k.dimension, k.key, $1, 0 FROM unflushed, unnest($2::text[], $3::text[]) AS k(dimension, key)
       ORDER BY k.dimension, k.key
     ON CONFLICT (dimension, key, hour) DO UPDATE SET sent = greatest(c.sent - 1, 0)`,
  // After a give-back ($1 hour, $2 dimensions, $3 keys): a row of the keys that counts nothing is
  // deleted, locked in the sorted order of the upserts. A refused start would otherwise leave a row
  // for each new key it named (a new block, user), kept 15 days. A row a check counts meanwhile is
  // read again once locked, and kept.
  dropEmptyCounts: `DELETE FROM verify_kit_pumping_counts WHERE (dimension, key, hour) IN (
       SELECT c.dimension, c.key, c.hour FROM verify_kit_pumping_counts c
         JOIN unnest($2::text[], $3::text[]) AS k(dimension, key) ON c.dimension = k.dimension AND c.key = k.key
       WHERE c.hour = $1 AND c.sent = 0 AND c.verified = 0 AND c.refused = 0
       ORDER BY c.dimension, c.key FOR UPDATE OF c)`,
  // The record of a reserved text's send, so its verification counts under its keys and hour.
  attachSend: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true))
     INSERT INTO verify_kit_pumping_sends (session_id, hour, dimensions, keys)
     SELECT $1, $2, $3, $4 FROM unflushed
     ON CONFLICT (session_id) DO NOTHING`,
  // The send and its counts in one statement; a session already counted counts nothing more. Keys
  // come sorted, so two sends lock shared counters in one order. Its commit does not wait for the
  // disk (synchronous_commit off for this statement's transaction alone): one round trip, where
  // BEGIN, SET LOCAL and COMMIT took three.
  recordSend: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true)),
     send AS (
       INSERT INTO verify_kit_pumping_sends (session_id, hour, dimensions, keys) VALUES ($1, $2, $3, $4)
       ON CONFLICT (session_id) DO NOTHING RETURNING hour, dimensions, keys)
     INSERT INTO verify_kit_pumping_counts AS c (dimension, key, hour, sent)
     SELECT k.dimension, k.key, send.hour, 1
       FROM unflushed, send CROSS JOIN LATERAL unnest(send.dimensions, send.keys) AS k(dimension, key)
       ORDER BY k.dimension, k.key
     ON CONFLICT (dimension, key, hour) DO UPDATE SET sent = c.sent + 1`,
  // One statement whose commit does not wait for the disk, as recordSend: a send counted already
  // matches no row, so a reload of a fulfilled attempt writes nothing and costs one round trip. Its
  // counters are locked in the sorted order of the upserts (`locked`): in the join's own order, a
  // send's upsert and a verification of the same keys could each wait on the other.
  markVerified: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true)),
     done AS (
       UPDATE verify_kit_pumping_sends SET verified = TRUE FROM unflushed WHERE session_id = $1 AND NOT verified
       RETURNING hour, dimensions, keys),
     locked AS (
       SELECT c.dimension, c.key, c.hour FROM verify_kit_pumping_counts c
       JOIN (SELECT done.hour, k.dimension, k.key
             FROM done CROSS JOIN LATERAL unnest(done.dimensions, done.keys) AS k(dimension, key)) k
         ON c.dimension = k.dimension AND c.key = k.key AND c.hour = k.hour
       ORDER BY c.dimension, c.key FOR UPDATE OF c),
     counted AS (
       UPDATE verify_kit_pumping_counts AS c SET verified = c.verified + 1
       FROM locked l WHERE c.dimension = l.dimension AND c.key = l.key AND c.hour = l.hour)
     SELECT count(*)::integer AS marked FROM done`,
  insertDecision: `INSERT INTO verify_kit_pumping_decisions (decided_at, decision, reasons, country, block, address, user_ref)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  listDecisions: `SELECT decided_at, decision, reasons, country, block, address, user_ref FROM verify_kit_pumping_decisions
     WHERE decided_at >= $1 ORDER BY decided_at DESC, id DESC LIMIT $2`,
  setRule: `INSERT INTO verify_kit_pumping_rules (dimension, key, rule, until, set_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (dimension, key) DO UPDATE SET rule = EXCLUDED.rule, until = EXCLUDED.until, set_at = EXCLUDED.set_at`,
  clearRule: 'DELETE FROM verify_kit_pumping_rules WHERE dimension = $1 AND key = $2',
  listRules:
    'SELECT dimension, key, rule, until, set_at FROM verify_kit_pumping_rules WHERE until > $1 ORDER BY set_at DESC',
  keysThatMayTrip: `SELECT key FROM verify_kit_pumping_counts
     WHERE dimension = $1 AND hour > $2 - 24 AND hour <= $2 GROUP BY key
     HAVING sum(sent) > sum(verified) OR sum(sent) = 0 OR coalesce(sum(refused) FILTER (WHERE hour >= $2 - 1), 0) > 0
     ORDER BY key`,
  countsByDay: `SELECT key, ($2 - hour) / 24 AS days_ago, sum(sent)::integer AS sent, sum(verified)::integer AS verified
     FROM verify_kit_pumping_counts WHERE dimension = $1 AND hour > $2 - 24 * $3 AND hour <= $2
     GROUP BY key, days_ago ORDER BY key, days_ago`,
  // Instances purging together share the work.
  purgePumping: `WITH counts AS (DELETE FROM verify_kit_pumping_counts WHERE (dimension, key, hour) IN (
         SELECT dimension, key, hour FROM verify_kit_pumping_counts WHERE hour < $1 LIMIT $4 FOR UPDATE SKIP LOCKED)
         RETURNING 1),
       sends AS (DELETE FROM verify_kit_pumping_sends WHERE session_id IN (
         SELECT session_id FROM verify_kit_pumping_sends WHERE hour < $1 LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING 1),
       decisions AS (DELETE FROM verify_kit_pumping_decisions WHERE id IN (
         SELECT id FROM verify_kit_pumping_decisions WHERE decided_at < $2 LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING 1),
       rules AS (DELETE FROM verify_kit_pumping_rules WHERE until <= $3 RETURNING 1)
     SELECT ((SELECT count(*) FROM counts) + (SELECT count(*) FROM sends) + (SELECT count(*) FROM decisions)
       + (SELECT count(*) FROM rules))::integer AS purged`,
  // The SMS pumping counters' repair (postgres-pumping.ts): the texts of attempts fulfilled since
  // $1 still counted unverified (their count failed), at most $2, counted as markVerified does: a
  // send another caller counts meanwhile is read again once locked, and skipped. Several sends of
  // one key and hour add up in one update of its row. Its counters are locked as every locker of
  // several hours' takes them (a later hour's first, then by key): in the join's own order it
  // and a check's locked reading could each wait on the other.
  countFulfilledSends: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true)),
     done AS (
       UPDATE verify_kit_pumping_sends AS s SET verified = TRUE FROM unflushed
       WHERE NOT s.verified AND s.session_id IN (
         SELECT a.session_id FROM verify_kit_attempts a JOIN verify_kit_pumping_sends p ON p.session_id = a.session_id
         WHERE a.outcome <> 'pending' AND a.finished_at >= $1 AND a.outcome = 'fulfilled' AND NOT p.verified LIMIT $2)
       RETURNING s.hour, s.dimensions, s.keys),
     t AS (
       SELECT k.dimension, k.key, done.hour, count(*)::integer AS n
       FROM done CROSS JOIN LATERAL unnest(done.dimensions, done.keys) AS k(dimension, key)
       GROUP BY k.dimension, k.key, done.hour),
     locked AS (
       SELECT c.dimension, c.key, c.hour FROM verify_kit_pumping_counts c
       JOIN t ON c.dimension = t.dimension AND c.key = t.key AND c.hour = t.hour
       ORDER BY c.hour DESC, c.dimension, c.key FOR UPDATE OF c),
     counted AS (
       UPDATE verify_kit_pumping_counts AS c SET verified = c.verified + t.n
       FROM t JOIN locked l ON l.dimension = t.dimension AND l.key = t.key AND l.hour = t.hour
       WHERE c.dimension = t.dimension AND c.key = t.key AND c.hour = t.hour)
     SELECT count(*)::integer AS marked FROM done`,
} as const;
