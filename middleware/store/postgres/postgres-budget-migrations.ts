/**
 * The start budgets' migrations of the PostgreSQL store (3 and 12 of postgres-schema.ts's list):
 * the counters' table and the routines instances of older kits call. Like every migration, their
 * text stays as it was first run.
 */
import { additive } from '../schema-versions.ts';

/**
 * 3: the start budgets, all counted in one transaction by one function call (one round trip).
 * A counter whose window has ended counts as empty until it is deleted. verify_kit_rate_limits
 * (rate-limiter-flexible's) is left for instances of an older kit still running beside this one.
 */
export const START_BUDGETS = additive(`CREATE TABLE verify_kit_start_budgets (
     key            TEXT PRIMARY KEY,
     spent          INTEGER NOT NULL,
     window_ends_at BIGINT NOT NULL
   );
   CREATE FUNCTION verify_kit_consume_start_budgets(p_keys TEXT[], p_points INTEGER[], p_durations_ms BIGINT[],
     p_now BIGINT)
   RETURNS TABLE (refused_budget INTEGER, retry_after_ms BIGINT) LANGUAGE plpgsql AS $fn$
   DECLARE
     c_budget INTEGER[];
     c_key TEXT[];
     c_spent INTEGER[];
     c_ends BIGINT[];
     c_points INTEGER[];
   BEGIN
     -- Lock every counter (creating the missing ones) in key order, so concurrent starts queue
     -- instead of deadlocking; ON CONFLICT DO UPDATE returns the latest committed row. A counter
     -- whose window has ended counts from zero, in a window starting now.
     WITH wanted AS (
       SELECT w.ord::INTEGER - 1 AS budget, w.key, w.points, w.duration_ms
       FROM unnest(p_keys, p_points, p_durations_ms) WITH ORDINALITY AS w(key, points, duration_ms, ord)),
     locked AS (
       INSERT INTO verify_kit_start_budgets AS b (key, spent, window_ends_at)
       SELECT wanted.key, 0, 0 FROM wanted ORDER BY wanted.key
       ON CONFLICT (key) DO UPDATE SET spent = b.spent
       RETURNING b.key, b.spent, b.window_ends_at)
     SELECT array_agg(wanted.budget ORDER BY wanted.budget), array_agg(wanted.key ORDER BY wanted.budget),
       array_agg(CASE WHEN locked.window_ends_at > p_now THEN locked.spent ELSE 0 END ORDER BY wanted.budget),
       array_agg(CASE WHEN locked.window_ends_at > p_now THEN locked.window_ends_at ELSE p_now + wanted.duration_ms END
         ORDER BY wanted.budget),
       array_agg(wanted.points ORDER BY wanted.budget)
     INTO c_budget, c_key, c_spent, c_ends, c_points
     FROM wanted JOIN locked ON locked.key = wanted.key;
     -- All or nothing: spend every budget only when none is full.
     IF NOT EXISTS (SELECT 1 FROM unnest(c_spent, c_points) AS x(spent, points) WHERE x.spent >= x.points) THEN
       UPDATE verify_kit_start_budgets AS b SET spent = x.spent + 1, window_ends_at = x.ends
       FROM unnest(c_key, c_spent, c_ends) AS x(key, spent, ends) WHERE b.key = x.key;
     END IF;
     RETURN QUERY SELECT x.budget, x.ends - p_now
       FROM unnest(c_budget, c_spent, c_points, c_ends) AS x(budget, spent, points, ends)
       WHERE x.spent >= x.points ORDER BY x.budget;
   END
   $fn$;`);

/**
 * 12: budgets of distinct values (the numbers a user tried): a start whose member was already
 * counted in the budget's open window spends nothing on it. Each counted member is a row of
 * verify_kit_start_budgets ("seen:<key>:<member>", never a budget's own key) ending with that
 * window, written under the counter's lock. The four-argument routine stays for instances of an
 * older kit still running beside this one.
 */
export const START_BUDGET_MEMBERS =
  additive(`CREATE FUNCTION verify_kit_consume_start_budgets_v2(p_keys TEXT[], p_points INTEGER[], p_durations_ms BIGINT[],
     p_members TEXT[], p_now BIGINT)
   RETURNS TABLE (refused_budget INTEGER, retry_after_ms BIGINT) LANGUAGE plpgsql AS $fn$
   DECLARE
     c_budget INTEGER[];
     c_key TEXT[];
     c_spent INTEGER[];
     c_ends BIGINT[];
     c_points INTEGER[];
     c_member TEXT[];
     c_counted BOOLEAN[];
   BEGIN
     WITH wanted AS (
       SELECT w.ord::INTEGER - 1 AS budget, w.key, w.points, w.duration_ms, w.member
       FROM unnest(p_keys, p_points, p_durations_ms, p_members) WITH ORDINALITY AS w(key, points, duration_ms, member, ord)),
     locked AS (
       INSERT INTO verify_kit_start_budgets AS b (key, spent, window_ends_at)
       SELECT wanted.key, 0, 0 FROM wanted ORDER BY wanted.key
       ON CONFLICT (key) DO UPDATE SET spent = b.spent
       RETURNING b.key, b.spent, b.window_ends_at)
     SELECT array_agg(wanted.budget ORDER BY wanted.budget), array_agg(wanted.key ORDER BY wanted.budget),
       array_agg(CASE WHEN locked.window_ends_at > p_now THEN locked.spent ELSE 0 END ORDER BY wanted.budget),
       array_agg(CASE WHEN locked.window_ends_at > p_now THEN locked.window_ends_at ELSE p_now + wanted.duration_ms END
         ORDER BY wanted.budget),
       array_agg(wanted.points ORDER BY wanted.budget),
       array_agg(wanted.member ORDER BY wanted.budget),
       array_agg(wanted.member IS NOT NULL AND locked.window_ends_at > p_now AND EXISTS (
           SELECT 1 FROM verify_kit_start_budgets AS m
           WHERE m.key = 'seen:' || wanted.key || ':' || wanted.member AND m.window_ends_at = locked.window_ends_at)
         ORDER BY wanted.budget)
     INTO c_budget, c_key, c_spent, c_ends, c_points, c_member, c_counted
     FROM wanted JOIN locked ON locked.key = wanted.key;
     -- All or nothing: spend every budget only when none is full (a member already counted spends nothing).
     IF NOT EXISTS (SELECT 1 FROM unnest(c_spent, c_points, c_counted) AS x(spent, points, counted)
         WHERE x.spent >= x.points AND NOT x.counted) THEN
       UPDATE verify_kit_start_budgets AS b SET spent = x.spent + 1, window_ends_at = x.ends
       FROM unnest(c_key, c_spent, c_ends, c_counted) AS x(key, spent, ends, counted)
       WHERE b.key = x.key AND NOT x.counted;
       INSERT INTO verify_kit_start_budgets AS b (key, spent, window_ends_at)
       SELECT 'seen:' || x.key || ':' || x.member, 1, x.ends
       FROM unnest(c_key, c_member, c_ends, c_counted) AS x(key, member, ends, counted)
       WHERE x.member IS NOT NULL AND NOT x.counted
       ON CONFLICT (key) DO UPDATE SET spent = 1, window_ends_at = excluded.window_ends_at;
     END IF;
     RETURN QUERY SELECT x.budget, x.ends - p_now
       FROM unnest(c_budget, c_spent, c_points, c_ends, c_counted) AS x(budget, spent, points, ends, counted)
       WHERE x.spent >= x.points AND NOT x.counted ORDER BY x.budget;
   END
   $fn$;`);
