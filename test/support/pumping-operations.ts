/**
 * What operators call (kit.pumping: block, clear, rules, decisions) on an in-memory SQLite store,
 * at a fixed time: for the tests of what those calls accept and show, which the store does not
 * decide (the targets are checked, and what is shown masked, before and after it).
 */
import { DEFAULT_HOOK_TIMEOUTS } from '../../middleware/deadline.ts';
import { pumpingOperations, type PumpingOperations } from '../../middleware/pumping/pumping-operations.ts';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

/** The operations' clock: a Monday, 10:00 UTC. */
export const OPERATIONS_NOW = Date.UTC(2026, 0, 5, 10);

export function operationsInMemory(): {
  ops: PumpingOperations;
  store: ReturnType<typeof createSqliteStore>;
} {
  const store = createSqliteStore({ database: ':memory:' });
  const ops = pumpingOperations({
    store: store.pumping,
    thresholds: DEFAULT_THRESHOLDS,
    mode: 'refuse',
    now: () => OPERATIONS_NOW,
    timeoutMs: DEFAULT_HOOK_TIMEOUTS.limits,
  });
  return { ops, store };
}
