/**
 * What `kit.pumping.countsByDay()` and `kit.pumping.decisions()` are asked with is an object of
 * options or nothing. Anything else (null from a form's empty field, a bare number meant as the
 * hours or days) is refused as `invalid_options` saying how to call them, never a TypeError from
 * inside the kit, nor read as the defaults (a page asking for 48 hours would list 24).
 */
import { beforeAll, expect, it } from 'vitest';
import { DEFAULT_HOOK_TIMEOUTS } from '../../middleware/deadline.ts';
import { pumpingOperations, type PumpingOperations } from '../../middleware/pumping/pumping-operations.ts';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { optionsRefusal as refusal } from '../support/options-refusal.ts';

let ops: PumpingOperations;
beforeAll(() => {
  const store = createSqliteStore({ database: ':memory:' });
  ops = pumpingOperations({
    store: store.pumping,
    thresholds: DEFAULT_THRESHOLDS,
    now: () => Date.UTC(2026, 0, 5, 10),
    timeoutMs: DEFAULT_HOOK_TIMEOUTS.limits,
  });
  return () => store.close();
});

const calls = (query: unknown) =>
  [
    ['countsByDay', () => ops.countsByDay(query as Parameters<PumpingOperations['countsByDay']>[0])],
    ['decisions', () => ops.decisions(query as Parameters<PumpingOperations['decisions']>[0])],
  ] as const;

it.each([null, 48, '48', true, [7]])('refuses %j as the query, saying how to call it', async (query) => {
  for (const [name, call] of calls(query)) {
    const message = await refusal(call());
    expect(message, name).toContain(`kit.pumping.${name}(`);
    expect(message, name).toMatch(/an object such as \{ (by|hours): /);
  }
});

it('reads the defaults with no query, or an empty one', async () => {
  for (const query of [undefined, {}]) {
    for (const [, call] of calls(query)) await expect(call()).resolves.toEqual([]);
  }
});

it('names the type of a value that is no number (a query parameter passed as it came): "48" is a string, not 48', async () => {
  expect(await refusal(ops.decisions({ hours: '48' as never }))).toContain('; got the string "48".');
  expect(await refusal(ops.decisions({ limit: '500' as never }))).toContain('; got the string "500".');
  expect(await refusal(ops.countsByDay({ days: '7' as never }))).toContain('; got the string "7".');
  expect(await refusal(ops.block({ country: 'NG' }, '12' as never))).toContain('; got the string "12".');
  expect(await refusal(ops.decisions({ hours: null as never }))).toContain('; got null.');
  expect(await refusal(ops.decisions({ hours: Object.create(null) as never }))).toContain(
    '; got a value of type object.',
  );
  // A number out of range is named as it is.
  expect(await refusal(ops.decisions({ hours: -1 }))).toContain('; got -1.');
  // A string that may be a phone number is not repeated.
  expect(await refusal(ops.decisions({ hours: '+447400123456' as never }))).not.toContain('447400123456');
});
