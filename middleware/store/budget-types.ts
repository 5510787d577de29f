/** The store contract's start budgets: what a start is counted against, and what a refusal says (store/types.ts). */

/** One start budget: at most `points` starts per fixed window of `durationMs`, counted under `key`. */
export interface StartBudget {
  key: string;
  points: number;
  durationMs: number;
  /**
   * Set for a budget of distinct values (numbers a user tried): a start whose `member` was already
   * counted in the budget's open window spends nothing on it. A counter that ignores it counts
   * every start instead (stricter, never looser).
   */
  member?: string;
}

export interface ConsumeStartBudgetsOptions {
  /** Distinct keys (the kit prefixes each with its budget's name). */
  budgets: readonly StartBudget[];
  now: number;
}

export interface RefundStartBudgetsOptions {
  /** The budgets the start was counted against. */
  budgets: readonly StartBudget[];
  /** The `now` of that consumeStartBudgets call. */
  spentAt: number;
}

/** A spent budget that refused the start: its index in `budgets`, and when its window ends. */
export interface StartBudgetRefusal {
  budget: number;
  retryAfterMs: number;
}
