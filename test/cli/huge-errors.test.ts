/**
 * A configuration's error of megabytes (a message built from a response body) is printed by a
 * command as one line of a few kilobytes, saying how much was left out: a line of megabytes on
 * stderr is one no log keeps whole. Runs the bin as built: needs `npm run build` (npm test builds
 * dist/ first).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PRINTED_TEXT } from '../../middleware/printable-errors.ts';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const HUGE = 5_000_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-cli-huge-'));
  writeFileSync(join(dir, 'huge.config.mjs'), `export default () => { throw new Error('x'.repeat(${HUGE})); };\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const options = { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...argv], options, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

describe('a configuration whose function of env throws an error of megabytes', () => {
  it('fraud: exit 1, one stderr line of a few kilobytes saying how much was cut', async () => {
    const { code, stdout, stderr } = await run(['fraud', 'rules', '--config', './huge.config.mjs']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.length).toBeLessThan(MAX_PRINTED_TEXT + 200);
    expect(stderr).toBe(
      `hosted-sms-verify-kit fraud: ${'x'.repeat(MAX_PRINTED_TEXT)}… (${HUGE - MAX_PRINTED_TEXT} more characters)\n`,
    );
  });
});
