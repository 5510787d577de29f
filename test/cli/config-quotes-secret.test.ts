/**
 * A configuration whose own code fails with a message quoting part of a secret it read from the
 * environment (the start of the client secret, a cut-off middle): the sweep job's line and the
 * fraud command's, whether its top-level code or its options failed, hold no run of 8 characters
 * of it. Only whole secrets were removed before, so the start of one was printed. Runs the bin as
 * built: needs `npm run build` (npm test builds dist/ first).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const SECRET = 'Zq8sLw3PmT9vXk2RbN7cYd4HfG6j';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-cli-quotes-'));
  // Its top-level code fails, quoting the secret's first 12 characters.
  writeFileSync(
    join(dir, 'throws.config.mjs'),
    'throw new Error(`cannot use ${process.env.VERIFY_CLIENT_SECRET.slice(0, 12)} as the secret`);\nexport default {};\n',
  );
  // Its options fail when read, quoting 10 characters from the secret's middle.
  writeFileSync(
    join(dir, 'getter.config.mjs'),
    'export default { get store() { throw new Error(`store for ${process.env.VERIFY_CLIENT_SECRET.slice(6, 16)}?`); } };\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(argv: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? '', VERIFY_CLIENT_SECRET: SECRET };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...argv], { cwd: dir, env, timeout: 60_000 }, (_error, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    );
  });
}

/** Every run of 8 characters of the secret the output holds. */
function secretRuns(output: string): string[] {
  const runs: string[] = [];
  for (let at = 0; at + 8 <= SECRET.length; at++)
    if (output.includes(SECRET.slice(at, at + 8))) runs.push(SECRET.slice(at, at + 8));
  return runs;
}

describe('a configuration quoting part of an environment secret', () => {
  it.each([
    ['sweep --once', 'throws'],
    ['sweep --once', 'getter'],
    ['fraud tripped', 'throws'],
    ['fraud tripped', 'getter'],
  ])('%s with the %s configuration prints none of it', async (command, config) => {
    const output = await run([...command.split(' '), '--config', `./${config}.config.mjs`]);
    // The failure is still said: the message around the secret's part stays.
    expect(output).toMatch(config === 'throws' ? /cannot use \[redacted\] as the secret/ : /store for \[redacted\]\?/);
    expect(secretRuns(output)).toEqual([]);
  });
});
