/**
 * An operator's block or release lasts at least a minute: one shorter (hours rounded to whole
 * milliseconds, or a tiny fraction typed by mistake) would be answered "blocked until <now>" and
 * never be read by a start, so it is refused (invalid_options, exit 1 from `fraud`), nothing written.
 */
import { afterAll, expect, it } from 'vitest';
import { DEFAULT_HOOK_TIMEOUTS } from '../../middleware/deadline.ts';
import { pumpingOperations } from '../../middleware/pumping/pumping-operations.ts';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { optionsRefusal } from '../support/options-refusal.ts';

const NOW = Date.UTC(2026, 0, 5, 10);
const store = createSqliteStore({ database: ':memory:' });
afterAll(() => store.close());

const ops = pumpingOperations({
  store: store.pumping,
  thresholds: DEFAULT_THRESHOLDS,
  mode: 'refuse',
  now: () => NOW,
  timeoutMs: DEFAULT_HOOK_TIMEOUTS.limits,
});

it('refuses a block or a release shorter than a minute, writing nothing; a minute is taken', async () => {
  const answered = await ops.block({ country: 'NG' }, 0.0000001).then(
    (rule) => rule,
    () => undefined,
  );
  const inForce = await ops.rules();
  const said =
    answered === undefined
      ? 'refused'
      : `resolved: blocked ${answered.dimension} ${answered.key} until ${new Date(answered.until).toISOString()} (now ${new Date(NOW).toISOString()}); rules in force: ${JSON.stringify(inForce)}`;
  expect(said).toBe('refused');
  expect(await optionsRefusal(ops.release({ country: 'GH' }, 1e-8))).toMatch(/hours/);
  expect(await ops.rules()).toEqual([]);
  expect(await ops.block({ country: 'NG' }, 1 / 60)).toMatchObject({ until: NOW + 60_000 });
});
