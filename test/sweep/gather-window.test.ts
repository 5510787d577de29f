/**
 * The sweep's gathering window (middleware/sweep/gather-window.ts): as long as a group's worth of
 * reads takes at the process's own rate of the last second, paced or not, within its bounds.
 */
import { expect, it } from 'vitest';
import { GATHER_MAX_MS, gatherWindowMs, GROUP_GATHER_MS } from '../../middleware/sweep/gather-window.ts';

/** The sweep's default lease (two minutes). */
const LEASE = 120_000;

it('gathers for as long as a batch of reads takes at the process rate: 50 at 125 a second, 400 ms', () => {
  expect(gatherWindowMs(125, 50, LEASE)).toBe(400);
  expect(gatherWindowMs(250, 50, LEASE)).toBe(200);
  // A process slowed by a busy machine (230 reads a second) still gathers a group's worth.
  expect(gatherWindowMs(230, 50, LEASE)).toBe(217);
});

it('keeps the window between the shortest one and a second', () => {
  expect(gatherWindowMs(5_000, 50, LEASE)).toBe(GROUP_GATHER_MS);
  expect(gatherWindowMs(10, 50, LEASE)).toBe(GATHER_MAX_MS);
  expect(gatherWindowMs(1, 500, LEASE)).toBe(GATHER_MAX_MS);
});

it('gathers for the shortest window before the process has read anything', () => {
  expect(gatherWindowMs(0, 50, LEASE)).toBe(GROUP_GATHER_MS);
});

it('gathers no longer than a tenth of a short lease, and never less than the shortest window', () => {
  expect(gatherWindowMs(10, 50, 5_000)).toBe(500);
  expect(gatherWindowMs(10, 50, 1_000)).toBe(100);
  expect(gatherWindowMs(10, 50, 300)).toBe(GROUP_GATHER_MS);
});
