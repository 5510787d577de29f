/**
 * What the sweep command's --help and the operating guide's table say `--time-budget-seconds` does
 * is what a run does with it (time-budget.ts): it starts no read in the budget's last half or its
 * last fulfil/onOutcome timeout, whichever is shorter (50 s of a 60 s budget at the defaults), and
 * finishes what it started after that; never that it claims until the budget is over.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { command } from '../../cli/sweep.ts';
import { runBudget } from '../../middleware/sweep/time-budget.ts';

/** The flag's text in --help: its line and the lines continuing it. */
function helpOf(flag: string): string {
  const lines = command.usage.split('\n');
  const at = lines.findIndex((line) => line.trimStart().startsWith(flag));
  const continued = lines.slice(at + 1).findIndex((line) => !/^ {29}\S/.test(line));
  return lines
    .slice(at, at + 1 + (continued === -1 ? lines.length : continued))
    .map((line) => line.trim())
    .join(' ');
}

const operatingRow = (flag: string) =>
  readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8')
    .split('\n')
    .find((line) => line.startsWith(`| \`${flag}`)) ?? '';

it('a 60 s budget at the default timeouts: reads start for 50 s, as --help and the operating table say, never until its end', () => {
  expect(runBudget(60_000, undefined).readingMs).toBe(50_000);
  expect(runBudget(60_000, { fulfil: 40_000 }).readingMs).toBe(30_000);
  const help = helpOf('--time-budget-seconds');
  expect(help).toContain('no read starts in its last half or its last fulfil timeout, the shorter');
  expect(help).not.toMatch(/stop claiming after/);
  const row = operatingRow('--time-budget-seconds');
  expect(row).toContain('no read starts in its last half or its last `fulfil`/`onOutcome` timeout, the shorter');
  expect(row).toContain('the last 10 s of 60 s at the defaults');
  expect(row).not.toMatch(/stops claiming after/);
});
