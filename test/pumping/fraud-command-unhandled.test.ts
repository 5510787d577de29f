/**
 * `hosted-sms-verify-kit fraud` as built, a process of its own, on a configuration whose own code
 * leaves an error nothing handles while the command runs (a promise it set off and left floating,
 * a timer of its own that throws): the command still answers what it was asked, exit 0, and says
 * that error in one line on stderr, without a stack, the client secret or a full phone number it
 * quotes. Node's own report printed the stack and the message whole, and ended the command with 1.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';
import { fraudHere, writeFraudConfigs } from '../support/fraud-command.ts';

const MAIN = builtFile('cli/main.js');
const SQLITE = builtFile('middleware/store/sqlite/sqlite.js');
const NUMBER = '+447400123456';

describe.concurrent(
  'hosted-sms-verify-kit fraud, a configuration leaving an error unhandled',
  { timeout: 60_000 },
  () => {
    const secret = `sk_live_${randomBytes(12).toString('hex')}`;
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'verify-fraud-unhandled-'));
      const config = (floating: string) => `import { createSqliteStore } from ${JSON.stringify(SQLITE)};
const secret = process.env.VERIFY_CLIENT_SECRET;
${floating}
export default {
  baseUrl: 'http://127.0.0.1:9', clientId: 'fraud-client', clientSecret: secret,
  returnUrl: 'http://localhost:3998/verify/return', store: createSqliteStore({ database: ':memory:' }),
  actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
};
// Still loading when the error comes: it is said once the kit is built.
await new Promise((resolve) => setTimeout(resolve, 100));
`;
      const message = `ledger refused \${secret} for ${NUMBER}`;
      writeFileSync(
        join(dir, 'rejects.config.mjs'),
        config(`setTimeout(() => Promise.reject(new Error(\`${message}\`)), 20);`),
      );
      writeFileSync(
        join(dir, 'throws.config.mjs'),
        config(`setTimeout(() => { throw new Error(\`${message}\`); }, 20);`),
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function fraud(config: string): Promise<{ code: number; stdout: string; stderr: string }> {
      const options = {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', VERIFY_CLIENT_SECRET: secret },
        timeout: 20_000,
      };
      return new Promise((resolve) => {
        execFile(process.execPath, [MAIN, 'fraud', 'rules', '--config', config], options, (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
        );
      });
    }

    it.each(['rejects', 'throws'])(
      'a configuration whose code %s: the answer, exit 0, one line without the secret, the number or a stack',
      async (kind) => {
        const run = await fraud(`${kind}.config.mjs`);
        expect(run.stdout).toBe('no rules in force\n');
        expect(run.code).toBe(0);
        expect(run.stderr).toMatch(
          /^hosted-sms-verify-kit fraud: the configuration's code .*ledger refused \[redacted\] for ••\u00a056/,
        );
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
        expect(run.stderr).not.toContain(secret.slice(8, 20));
        expect(run.stderr).not.toContain('7400123456');
        expect(run.stderr).not.toMatch(/\n\s+at /);
      },
    );
  },
);

it("run in the caller's process (its own output given): the process's handlers are as they were after each run", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'verify-fraud-in-process-'));
  try {
    writeFraudConfigs(dir, 'sqlite', join(dir, 'store.sqlite'), join(dir, 'empty.sqlite'));
    const counts = () => ['unhandledRejection', 'uncaughtException', 'exit'].map((e) => process.listenerCount(e));
    const before = counts();
    for (let run = 0; run < 3; run++) expect((await fraudHere(dir, 'verify.config.mjs', 'rules')).code).toBe(0);
    expect(counts()).toEqual(before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
