/**
 * An operator can clear a rule the kit keeps but would refuse today: one stored before its target
 * checks (a block a digit too long, whose numbers are counted under another block; 'EH', whose
 * numbers are counted under 'MA'). clear() went through block()'s checks and refused them, so such
 * a rule could only wait for its end. A refused target that names no kept rule is still refused,
 * with block()'s reason, and clears nothing else.
 */
import { afterAll, expect, it } from 'vitest';
import { operationsInMemory, OPERATIONS_NOW } from '../support/pumping-operations.ts';

const { ops, store } = operationsInMemory();
afterAll(() => store.close());

const HOUR = 3_600_000;
/** Stored as an earlier kit stored them: straight into the store, past today's checks. */
const KEPT = [
  { dimension: 'block', key: '+417812345' },
  { dimension: 'country', key: 'EH' },
] as const;

it.each(KEPT)(
  'clears a kept $dimension rule the checks refuse today ($key), and only it',
  async ({ dimension, key }) => {
    await store.pumping.setRule({ dimension, key, rule: 'block', until: OPERATIONS_NOW + HOUR, setAt: OPERATIONS_NOW });
    await store.pumping.setRule({
      dimension: 'country',
      key: 'NG',
      rule: 'block',
      until: OPERATIONS_NOW + HOUR,
      setAt: OPERATIONS_NOW - 1,
    });
    expect(await ops.clear({ [dimension]: key })).toBe(true);
    expect((await ops.rules()).map((r) => `${r.dimension} ${r.key}`)).toEqual(['country NG']);
    await ops.clear({ country: 'NG' });
  },
);

it('refuses a target the checks refuse that names no kept rule, with the reason block() gives', async () => {
  const cleared = await ops.clear({ block: '+417812346' }).then(
    () => 'cleared',
    (error: Error) => error.message,
  );
  expect(cleared).toMatch(/no number of this one is counted under it/);
  const eh = await ops.clear({ country: 'EH' }).then(
    () => 'cleared',
    (error: Error) => error.message,
  );
  expect(eh).toMatch(/counted under 'MA'/);
});
