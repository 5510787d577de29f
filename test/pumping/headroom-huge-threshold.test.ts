/**
 * A start's headroom (how far the counts may move with its verdict unchanged) is searched for from
 * an estimate; past 2^53 `n - 1` is n, and a search counting down one at a time never ended: with
 * a threshold the options accept (any finite positive number, here hourlyFloor
 * Number.MAX_SAFE_INTEGER, whose held threshold is three times it), every start no rule refused
 * spun the event loop for good (the store calls' deadlines are timers: they never fire). The check
 * runs in a child process, so a spin cannot hang the test runner: it must print "start checked"
 * within 20 s.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./headroom-huge-threshold.child.ts', import.meta.url));

function checkOneStart(hourlyFloor: number) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', CHILD, String(hourlyFloor)], {
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
  });
  return { timedOut: run.error !== undefined || run.signal === 'SIGKILL', stdout: run.stdout, stderr: run.stderr };
}

it('a start under a country hourlyFloor of 1e9 is checked (control)', () => {
  const run = checkOneStart(1e9);
  expect(run.stdout, run.stderr).toContain('start checked: let through');
}, 30_000);

it('a start under a country hourlyFloor of Number.MAX_SAFE_INTEGER (accepted by the options) is checked, not spun on forever', () => {
  const run = checkOneStart(Number.MAX_SAFE_INTEGER);
  expect(run.stdout).toContain('options problems: []');
  expect(run.timedOut, `the guard never returned; child said:\n${run.stdout}`).toBe(false);
  expect(run.stdout).toContain('start checked: let through');
}, 30_000);
