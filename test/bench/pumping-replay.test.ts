/**
 * The pumping phase's replay through a real store (bench/phases/pumping-replay.ts): on the month's
 * first starts the SQLite store decides as the in-memory model does, and a single decision that
 * differs is reported, naming the start and both decisions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { replayOn, slice } from '../../bench/phases/pumping-replay.ts';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

const { events, expected } = slice();
/** The launch day's first hours and past the first refusals: enough to hold decisions of both kinds. */
const firstRefused = expected.findIndex((reasons) => reasons.length > 0);
const COUNT = firstRefused + 200;

describe('the pumping replay through a store', () => {
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it("finds the SQLite store's decisions equal to the model's on the month's first starts", async () => {
    expect(firstRefused).toBeGreaterThan(0);
    store = createSqliteStore({ database: ':memory:' });
    expect(await replayOn(store.pumping, events.slice(0, COUNT), expected.slice(0, COUNT))).toBeUndefined();
  });

  it('names the first start whose decision differs from the model', async () => {
    store = createSqliteStore({ database: ':memory:' });
    const altered = expected.slice(0, COUNT);
    altered[firstRefused] = [];
    const difference = await replayOn(store.pumping, events.slice(0, COUNT), altered);
    expect(difference).toMatch(new RegExp(`^start ${firstRefused} \\(.*\\): store \\[.+\\], model \\[\\]$`));
  });
});
