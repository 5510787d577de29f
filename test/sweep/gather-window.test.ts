/**
 * The sweep's gathering window (middleware/sweep/gather-window.ts): unpaced, the fixed window; paced,
 * as long as a group's worth of reads takes at the process's own rate, within its bounds.
 */
import { expect, it } from 'vitest';
import { gatherWindowMs, GROUP_GATHER_MS, PACED_GATHER_MAX_MS } from '../../middleware/sweep/gather-window.ts';

/** The sweep's default lease (two minutes). */
const LEASE = 120_000;

it('gathers for the fixed window while unpaced, whatever the batch', () => {
  expect(gatherWindowMs(null, 50, LEASE)).toBe(GROUP_GATHER_MS);
  expect(gatherWindowMs(null, 500, LEASE)).toBe(GROUP_GATHER_MS);
});

it('gathers for as long as a batch of reads takes at the paced rate: 50 at 125 a second, 400 ms', () => {
  expect(gatherWindowMs(125, 50, LEASE)).toBe(400);
  expect(gatherWindowMs(250, 50, LEASE)).toBe(200);
});

it('keeps a paced window between the fixed one and a second', () => {
  expect(gatherWindowMs(5_000, 50, LEASE)).toBe(GROUP_GATHER_MS);
  expect(gatherWindowMs(10, 50, LEASE)).toBe(PACED_GATHER_MAX_MS);
  expect(gatherWindowMs(0, 50, LEASE)).toBe(GROUP_GATHER_MS);
});

it('gathers no longer than a tenth of a short lease, and never less than the fixed window', () => {
  expect(gatherWindowMs(10, 50, 5_000)).toBe(500);
  expect(gatherWindowMs(10, 50, 1_000)).toBe(100);
  expect(gatherWindowMs(10, 50, 300)).toBe(GROUP_GATHER_MS);
});
