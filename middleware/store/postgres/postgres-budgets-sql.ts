/**
 * The start budgets' statements (postgres.ts): a start's budgets counted all or nothing in one
 * routine call, a start given back, ended counters deleted. Part of the store's statements
 * (postgres-sql.ts, which names each after `verify_kit_`).
 */
import { routine } from './postgres-routine.ts';

/** Ended start budget counters are deleted in batches of at most this many. */
export const ENDED_BUDGETS_PER_CLEANUP = 1000;

/**
 * How far ahead of the database's clock an instance's clock may count start budgets. Windows are
 * shared by every instance, so one whose clock runs ahead would end live windows early (a fresh
 * budget) and delete counters others still use: its time is cut to the database's plus this.
 */
export const BUDGET_CLOCK_AHEAD_MS = 1000;

/** The caller's time ($n), never later than the database's clock plus BUDGET_CLOCK_AHEAD_MS. */
const budgetNow = (n: number) =>
  `LEAST($${n}::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + ${BUDGET_CLOCK_AHEAD_MS})`;

/**
 * A start's budgets, all or nothing, as migration 12's routine counted them, but for one thing:
 * whether a member (a number the user tried) was counted already is read in a statement of its
 * own, after the counters' locks are held. Its snapshot then holds the marker of every start that
 * held them before; read in the locking statement, from a snapshot taken before it waited, a number
 * tried twice at once on two instances was counted twice.
 */
const CONSUME_BUDGETS_BODY = `
DECLARE
  c_budget INTEGER[];
  c_key TEXT[];
  c_spent INTEGER[];
  c_ends BIGINT[];
  c_open BOOLEAN[];
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
    array_agg(locked.window_ends_at > p_now ORDER BY wanted.budget),
    array_agg(wanted.points ORDER BY wanted.budget),
    array_agg(wanted.member ORDER BY wanted.budget)
  INTO c_budget, c_key, c_spent, c_ends, c_open, c_points, c_member
  FROM wanted JOIN locked ON locked.key = wanted.key;
  SELECT array_agg(x.member IS NOT NULL AND x.open AND EXISTS (
      SELECT 1 FROM verify_kit_start_budgets AS m
      WHERE m.key = 'seen:' || x.key || ':' || x.member AND m.window_ends_at = x.ends) ORDER BY x.ord)
  INTO c_counted
  FROM unnest(c_key, c_member, c_open, c_ends) WITH ORDINALITY AS x(key, member, open, ends, ord);
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
    -- Counted: the window each budget was counted in, by its end (a refund gives back that one only).
    RETURN QUERY SELECT x.budget, NULL::BIGINT, x.ends
      FROM unnest(c_budget, c_ends) AS x(budget, ends) ORDER BY x.budget;
  END IF;
  RETURN QUERY SELECT x.budget, x.ends - p_now, x.ends
    FROM unnest(c_budget, c_spent, c_points, c_ends, c_counted) AS x(budget, spent, points, ends, counted)
    WHERE x.spent >= x.points AND NOT x.counted ORDER BY x.budget;
END`;
/**
 * The consume's routine, its statements on one generic plan per connection: planned again for
 * each call's values, they cost the database about a third more (docs/performance.md).
 */
export const CONSUME_BUDGETS = routine(
  'verify_kit_consume_start_budgets',
  'text[], integer[], bigint[], text[], bigint',
  `(p_keys TEXT[], p_points INTEGER[], p_durations_ms BIGINT[],
      p_members TEXT[], p_now BIGINT)
      RETURNS TABLE (budget_index INTEGER, retry_after_ms BIGINT, window_ends_at BIGINT)
      LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $fn$${CONSUME_BUDGETS_BODY}
      $fn$`,
);
const CONSUME_BUDGETS_ROUTINE = CONSUME_BUDGETS.name;

export const BUDGETS_SQL = {
  // One call, one transaction (the statement's): see CONSUME_BUDGETS_BODY. A row per refused
  // budget (its retry_after_ms), or, when counted, a row per budget with the end of its window.
  consumeStartBudgets: `SELECT budget_index, retry_after_ms, window_ends_at
    FROM ${CONSUME_BUDGETS_ROUTINE}($1, $2, $3, $4, ${budgetNow(5)})`,
  // SKIP LOCKED: never waits on a counter a start holds, so it cannot deadlock with one.
  // Counters locked in key order, as the consume routine locks them; only the window the refunded
  // start was counted in: the one ending when consume said ($3), or, where not known (null), the
  // one ending after spentAt ($4) and at most one duration after it. An instance whose clock runs
  // ahead is counted at the database's time plus a second, not at its spentAt: only the window's
  // end names the window it was counted in.
  refundStartBudgets: `WITH refund AS (
       SELECT b.key FROM verify_kit_start_budgets AS b
       JOIN unnest($1::text[], $2::bigint[], $3::bigint[]) AS x(key, duration_ms, ends) ON x.key = b.key
       WHERE b.spent > 0 AND CASE WHEN x.ends IS NOT NULL THEN b.window_ends_at = x.ends
         ELSE b.window_ends_at > $4 AND b.window_ends_at <= $4 + x.duration_ms END
       ORDER BY b.key FOR UPDATE OF b)
     UPDATE verify_kit_start_budgets AS b SET spent = b.spent - 1 FROM refund WHERE b.key = refund.key`,
  deleteEndedBudgets: `DELETE FROM verify_kit_start_budgets WHERE key IN (
      SELECT key FROM verify_kit_start_budgets WHERE window_ends_at <= ${budgetNow(1)}
      LIMIT ${ENDED_BUDGETS_PER_CLEANUP} FOR UPDATE SKIP LOCKED)`,
} as const;
