/**
 * emulator/README.md lists each point the interface leaves open ("not shown"), the emulator's choice
 * and how a test varies it. Every row says how (or "Fixed"), and every fault it names for that is one
 * the running emulator's control API knows, so the README never sends a test to a knob that does not
 * exist.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator();
const readme = readFileSync(new URL('../../emulator/README.md', import.meta.url), 'utf8');
const section = readme.slice(
  readme.indexOf('## Choices where the spec says "not shown"'),
  readme.indexOf('## Error codes'),
);
/** The table's body rows, each split into its cells (a `|` inside backticks does not occur there). */
const rows = section
  .split('\n')
  .filter((line) => line.startsWith('| ') && !line.startsWith('| Point |'))
  .map((line) => line.slice(2, -2).split(' | '));

describe('the README says how a test varies each choice the interface leaves open', () => {
  it('has the choices table, each row with a point, a choice and how a test varies it', () => {
    expect(rows.length).toBeGreaterThan(20);
    for (const row of rows) {
      expect(row, row[0]).toHaveLength(3);
      expect(row[2]?.trim(), row[0]).toMatch(/\S/);
    }
  });

  it('names only faults the control API knows', async () => {
    const { faults } = (await (await fetch(`${emulator.url}/_control/faults`)).json()) as { faults: object };
    const named = rows.flatMap(([, , vary = '']) =>
      [...vary.matchAll(/injectFaults\(\{ ([^}]*) \}\)/g)].flatMap((match) =>
        (match[1] ?? '').split(',').map((part) => part.split(':')[0]?.trim() ?? ''),
      ),
    );
    expect(named).toContain('validationStatus');
    for (const name of named) expect(Object.keys(faults), name).toContain(name);
  });
});
