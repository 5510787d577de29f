/**
 * The audit command as a person runs it (`hosted-sms-verify-kit audit --config FILE`): when the
 * configuration's own code fails with a message quoting the client secret (its factory, its
 * close()), what the command prints never shows the secret; and whatever it throws, even a value
 * `instanceof` refuses (a revoked Proxy, as a membrane or a sandboxed loader hands back), one line
 * naming the command, exit 1, no stack. Runs the bin as built: needs `npm run build` (npm test
 * builds dist/ first).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

// Plain node starts the built bin in under half of what loading the TypeScript through tsx takes.
const MAIN = builtFile('cli/main.js');
const SECRET = `audit/${randomBytes(12).toString('base64')}+x`;
/** A secret as a portal may issue it: letters, digits and underscores (unquoted, it is a name). */
const NAMED_SECRET = `sk_live_${randomBytes(12).toString('hex')}`;
const DATABASE_PASSWORD = `pw${randomBytes(9).toString('hex')}`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-audit-cli-'));
  writeFileSync(
    join(dir, 'factory-throws.config.mjs'),
    `export default (env) => { throw new Error('could not start the app with ' + env.VERIFY_CLIENT_SECRET); };`,
  );
  writeFileSync(join(dir, 'throws-odd.config.mjs'), 'throw Object.create(null);');
  // The secret pasted without its quotes, in the module and in its factory: a name a ReferenceError quotes.
  writeFileSync(join(dir, 'unquoted.config.mjs'), `export default { clientSecret: ${NAMED_SECRET} };`);
  writeFileSync(join(dir, 'unquoted-factory.config.mjs'), `export default () => ({ clientSecret: ${NAMED_SECRET} });`);
  // Options the audit refuses (no app), so close is read at once.
  writeFileSync(
    join(dir, 'close-revoked.config.mjs'),
    `const { proxy, revoke } = Proxy.revocable({}, {});
     revoke();
     export default { get close() { throw proxy; } };`,
  );
  // Options the audit refuses (no app), and a close() whose error quotes the secret it was given.
  writeFileSync(
    join(dir, 'close-throws.config.mjs'),
    `export default (env) => ({
       clientId: 'audit-client', clientSecret: env.VERIFY_CLIENT_SECRET,
       close() { throw new Error('could not stop the client ' + encodeURIComponent(env.VERIFY_CLIENT_SECRET)); },
     });`,
  );
  // A close() whose error quotes the app's database URL, password included.
  writeFileSync(
    join(dir, 'close-database-url.config.mjs'),
    `export default {
       close() { throw new Error('could not close postgres://app:${DATABASE_PASSWORD}@db.internal:5432/app'); },
     };`,
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

/** The secret's spellings a message may carry it in. */
const FORMS = [SECRET, encodeURIComponent(SECRET), JSON.stringify(SECRET).slice(1, -1)];

describe('hosted-sms-verify-kit audit, a configuration whose code quotes the secret', () => {
  it('a factory that throws: exit 1, the failure named, never the secret', async () => {
    const run = await audit('./factory-throws.config.mjs');
    expect(run.code).toBe(1);
    expect(run.output).toContain('could not start the app with');
    for (const form of FORMS) expect(run.output).not.toContain(form);
  });

  it('a close() that throws: exit 1, the failure named, never the secret', async () => {
    const run = await audit('./close-throws.config.mjs');
    expect(run.code).toBe(1);
    expect(run.output).toContain('could not stop the client');
    for (const form of FORMS) expect(run.output).not.toContain(form);
  });

  it('a close() whose error quotes a database URL: the URL printed without its password', async () => {
    const run = await audit('./close-database-url.config.mjs');
    expect(run.code).toBe(1);
    expect(run.output).toContain('could not close postgres://app:[redacted]@db.internal:5432/app');
    expect(run.output).not.toContain(DATABASE_PASSWORD);
  });

  it('a module that throws an object without a prototype: exit 1, one line, no stack trace', async () => {
    const run = await audit('./throws-odd.config.mjs');
    expect(run.code).toBe(1);
    expect(run.output).toContain('hosted-sms-verify-kit audit: [object Object]');
    expect(run.output).not.toMatch(/\n\s+at /);
  });
});

describe('hosted-sms-verify-kit audit, a configuration whose code quotes the secret as a name', () => {
  it.each(['unquoted.config.mjs', 'unquoted-factory.config.mjs'])(
    '%s: exit 1, the ReferenceError and where it happened named, never any of the secret',
    async (config) => {
      const run = await audit(`./${config}`);
      expect(run.code).toBe(1);
      expect(run.output).toMatch(new RegExp(`ReferenceError at \\S*${config.replaceAll('.', '\\.')}:1:\\d+`));
      expect(run.output).not.toContain(NAMED_SECRET.slice(0, 8));
      expect(run.output).not.toContain(NAMED_SECRET.slice(-8));
      expect(run.output).not.toMatch(/\n\s+at /);
    },
  );
});

describe('hosted-sms-verify-kit audit, a configuration that throws a value instanceof cannot read', () => {
  it('a close getter throwing a revoked Proxy: exit 1, your close() named, one line from the command, no stack', async () => {
    const run = await audit('./close-revoked.config.mjs');
    expect(run.code).toBe(1);
    expect(run.output).toContain('your close() failed: a value that cannot be read');
    expect(run.output).toMatch(/^hosted-sms-verify-kit audit: /m);
    expect(run.output).not.toMatch(/\n\s+at /);
  });
});
