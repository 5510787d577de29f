/**
 * The audit command as a person runs it: a configuration whose own code fails (its function of
 * env) with a message quoting part of the client secret, or a user's phone number, is said on one
 * line as the command's other lines are: no part of the secret, no number in full, exit 1. Runs
 * the bin as built: needs `npm run build` (npm test builds dist/ first).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const SECRET = `sk_live_${randomBytes(16).toString('hex')}`;
/** The first 14 characters of the secret: a "hint" a message may quote. */
const SECRET_START = SECRET.slice(0, 14);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-audit-config-errors-'));
  writeFileSync(
    join(dir, 'secret-start.config.mjs'),
    `export default (env) => { throw new Error('could not start the app with ' + env.VERIFY_CLIENT_SECRET.slice(0, 14) + '...'); };`,
  );
  writeFileSync(
    join(dir, 'user-number.config.mjs'),
    `export default () => { throw new Error('could not seed the user of +44 7700 900123 (07700 900456)'); };`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function audit(config: string): Promise<{ code: number; output: string }> {
  const env = { PATH: process.env.PATH ?? '', VERIFY_CLIENT_SECRET: SECRET };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, 'audit', '--config', config], { cwd: dir, env }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code), output: `${stdout}\n${stderr}` }),
    );
  });
}

describe("hosted-sms-verify-kit audit, a configuration's failure quoting what must not be printed", () => {
  it('a function of env quoting the start of the secret: exit 1, the failure named, no part of the secret', async () => {
    const run = await audit('./secret-start.config.mjs');
    expect(run.code).toBe(1);
    expect(run.output).toContain('could not start the app with');
    expect(run.output).not.toContain(SECRET_START);
    expect(run.output).not.toContain(SECRET.slice(0, 8));
  });

  it("a function of env quoting a user's number: exit 1, the failure named, the number masked", async () => {
    const run = await audit('./user-number.config.mjs');
    expect(run.code).toBe(1);
    expect(run.output).toContain('could not seed the user of +[a number ending ');
    expect(run.output.replace(/\D/g, ' ')).not.toMatch(/\d{5}/);
  });
});
