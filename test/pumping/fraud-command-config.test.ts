/**
 * `hosted-sms-verify-kit fraud` as built, a process of its own, on a configuration whose own code
 * fails or hangs: an error quoting the configuration's text or the database URL is said without the
 * secret or the password and without a stack, exit 1; a close, a store call, a ready kit's operation
 * or a function of env that never settles (holding a timer, or nothing) ends the command within its
 * deadline, saying so; a close that throws, or fails after its deadline, is one line on stderr.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const SQLITE = builtFile('middleware/store/sqlite/sqlite.js');

// Each test runs processes of its own on files of its own: they run at once.
describe.concurrent(
  'hosted-sms-verify-kit fraud, a configuration whose own code fails quoting its text',
  { timeout: 60_000 },
  () => {
    // A secret as a portal may issue it: letters, digits and underscores, so unquoted it is a name.
    const secret = `sk_live_${randomBytes(12).toString('hex')}`;
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'verify-fraud-quoting-'));
      // Pasted without its quotes: a name that is not defined.
      writeFileSync(join(dir, 'unquoted.config.mjs'), `export default {\n  clientSecret: ${secret},\n};\n`);
      writeFileSync(join(dir, 'unquoted-factory.config.mjs'), `export default () => ({ clientSecret: ${secret} });\n`);
      // A settings file that does not parse: JSON.parse quotes its start.
      writeFileSync(join(dir, 'settings.json'), `{ "clientSecret": ${secret} }`);
      writeFileSync(
        join(dir, 'settings.config.mjs'),
        `import { readFileSync } from 'node:fs';\nexport default JSON.parse(readFileSync(new URL('./settings.json', import.meta.url), 'utf8'));\n`,
      );
      // A configuration quoting the database URL it was given, its password in it.
      writeFileSync(
        join(dir, 'database-url.config.mjs'),
        'export default (env) => { throw new Error(`could not reach the database at ${env.DATABASE_URL}`); };\n',
      );
      // A quote left open: the module does not parse.
      writeFileSync(join(dir, 'open-quote.config.mjs'), `export default {\n  clientSecret: '${secret},\n};\n`);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function fraud(config: string, env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
      const options = { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 };
      return new Promise((resolve) => {
        execFile(process.execPath, [MAIN, 'fraud', 'tripped', '--config', config], options, (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : Number(error.code), output: `${stdout}${stderr}` }),
        );
      });
    }

    it('a database URL quoted in an error: exit 1, the URL without its password', async () => {
      const password = `pw-${randomBytes(9).toString('base64url')}`;
      const run = await fraud('database-url.config.mjs', {
        DATABASE_URL: `postgres://app:${password}@db.internal:5432/app`,
      });
      expect(run.code).toBe(1);
      expect(run.output).toContain('could not reach the database at postgres://app:[redacted]@db.internal:5432/app');
      expect(run.output).not.toContain(password.slice(0, 8));
    });

    it.each([
      ['unquoted.config.mjs', /ReferenceError at \S*unquoted\.config\.mjs:2:\d+/],
      ['unquoted-factory.config.mjs', /ReferenceError at \S*unquoted-factory\.config\.mjs:1:\d+/],
      ['settings.config.mjs', /SyntaxError at \S*settings\.config\.mjs:2:\d+/],
      ['open-quote.config.mjs', /SyntaxError in the configuration module/],
    ])('%s: exit 1, says where and what kind, never any of the secret', async (config, where) => {
      const run = await fraud(config);
      expect(run.code).toBe(1);
      expect(run.output).toMatch(where);
      expect(run.output).not.toContain(secret.slice(0, 8));
      expect(run.output).not.toContain(secret.slice(-8));
      expect(run.output).not.toMatch(/\n\s+at /);
    });
  },
);

// Each test runs a process of its own on a store of its own: they run at once, their waits overlapping.
describe.concurrent(
  'hosted-sms-verify-kit fraud, a configuration whose code hangs or throws',
  { timeout: 60_000 },
  () => {
    const SCALED_TIMERS = fileURLToPath(new URL('../fixtures/scaled-timers.mjs', import.meta.url));
    const TIMER_SCALE = 10;
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'verify-fraud-close-'));
      const config = (close: string, name: string) => `import { createSqliteStore } from ${JSON.stringify(SQLITE)};
      export default { close: ${close}, kit: {
        baseUrl: 'http://127.0.0.1:9', clientId: 'fraud-client', clientSecret: 'fraud-secret-0123456789abcdef',
        returnUrl: 'http://localhost:3998/verify/return',
        store: createSqliteStore({ database: ${JSON.stringify(join(dir, `${name}.sqlite`))} }),
        actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
      } };`;
      // Never settles, and keeps a timer that would keep the process alive.
      writeFileSync(
        join(dir, 'hangs.config.mjs'),
        config('() => new Promise(() => setInterval(() => {}, 1000))', 'hangs'),
      );
      writeFileSync(join(dir, 'throws.config.mjs'), config("() => { throw new Error('pool.end failed'); }", 'throws'));
      // Fails 0.2 s after the close's 10 s deadline (which counts from before the kit and its store are
      // closed, so a slow close of theirs moves this failure later), well within the 2 s a finished
      // command waits before it exits.
      writeFileSync(
        join(dir, 'fails-late.config.mjs'),
        config(
          "() => new Promise((_resolve, reject) => setTimeout(() => reject(new Error('pool.end failed: connection to postgres://app:pw-0123@db/app lost (fraud-secret-0123456789abcdef)')), 10_200))",
          'fails-late',
        ),
      );
      // Never settles, and holds nothing at all (a forgotten promise).
      writeFileSync(join(dir, 'closes-never.config.mjs'), config('() => new Promise(() => {})', 'closes-never'));
      // A store whose pumping calls never settle, holding nothing (a custom store's forgotten promise).
      writeFileSync(
        join(dir, 'store-never.config.mjs'),
        `import configured from './closes-never.config.mjs';
       const { store } = configured.kit;
       const pumping = new Proxy(store.pumping, {
         get: (target, name) =>
           typeof target[name] === 'function' ? () => new Promise(() => {}) : target[name],
       });
       const hung = new Proxy(store, {
         get: (target, name) =>
           name === 'pumping' ? pumping : typeof target[name] === 'function' ? target[name].bind(target) : target[name],
       });
       export default { close: () => {}, kit: { ...configured.kit, store: hung, hookTimeouts: { limits: 500 } } };`,
      );
      // A ready kit of the app's own making whose operations never settle, holding nothing.
      writeFileSync(
        join(dir, 'kit-never.config.mjs'),
        'const never = () => new Promise(() => {});\n' +
          'export default { kit: { pumping: { tripped: never, rules: never }, close: async () => {} } };',
      );
      // A function of env that never answers: one holding a timer, one holding nothing at all.
      writeFileSync(
        join(dir, 'builds-forever.config.mjs'),
        'export default () => new Promise(() => setInterval(() => {}, 1000));',
      );
      writeFileSync(join(dir, 'builds-never.config.mjs'), 'export default () => new Promise(() => {});');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** The bin on a test clock ten times faster: its deadlines (10 s, 30 s) pass in a tenth of that. */
    function fraud(
      config: string,
      scale = TIMER_SCALE,
    ): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
      const started = Date.now();
      const env = { PATH: process.env.PATH ?? '', TEST_TIMER_SCALE: String(scale) };
      const options = { cwd: dir, env, timeout: 50_000 };
      const argv = ['--import', SCALED_TIMERS, MAIN, 'fraud', 'rules', '--config', config];
      return new Promise((resolve) => {
        execFile(process.execPath, argv, options, (error, stdout, stderr) =>
          resolve({
            code: error === null ? 0 : error.killed ? -1 : Number(error.code),
            stdout,
            stderr,
            ms: Date.now() - started,
          }),
        );
      });
    }

    it('a close that never settles: the answer printed, exit 0 within its deadline, the late close said on stderr', async () => {
      const run = await fraud('hangs.config.mjs');
      expect(run).toMatchObject({ code: 0, stdout: 'no rules in force\n' });
      expect(run.stderr).toMatch(
        /^hosted-sms-verify-kit fraud: could not close what the configuration opened: .*within \d+ ms/m,
      );
      expect(run.ms).toBeLessThan(20_000);
    });

    it('a close that never settles, holding nothing: the answer printed, then the late close said on stderr, exit 0, not node ending it unsaid', async () => {
      const run = await fraud('closes-never.config.mjs');
      expect(run).toEqual({
        code: 0,
        stdout: 'no rules in force\n',
        stderr:
          'hosted-sms-verify-kit fraud: could not close what the configuration opened: closing did not finish within 10000 ms\n',
        ms: expect.any(Number),
      });
      expect(run.ms).toBeLessThan(20_000);
    });

    it("a store call that never settles, holding nothing: exit 1 within the kit's hookTimeouts.limits, saying so, not node ending it unsaid", async () => {
      const run = await fraud('store-never.config.mjs');
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr:
          "hosted-sms-verify-kit fraud: kit.pumping.rules() did not get the store's answer within 500 ms (raise hookTimeouts.limits if the store needs longer).\n",
        ms: expect.any(Number),
      });
      expect(run.ms).toBeLessThan(20_000);
    });

    it("a ready kit whose operation never settles, holding nothing: exit 1 after the command's 30 s, saying so, not node ending it unsaid", async () => {
      const run = await fraud('kit-never.config.mjs');
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: 'hosted-sms-verify-kit fraud: the store did not answer within 30000 ms: is its database reachable?\n',
        ms: expect.any(Number),
      });
      expect(run.ms).toBeGreaterThanOrEqual(30_000 / TIMER_SCALE);
    });

    it('a function of env that never answers (holding a timer, or nothing): exit 1 within its deadline, saying so, without a stack', async () => {
      const configs = ['builds-forever.config.mjs', 'builds-never.config.mjs'];
      const runs = await Promise.all(configs.map((config) => fraud(config)));
      runs.forEach((run, i) => {
        expect(run.code, configs[i]).toBe(1);
        expect(run.stderr).toBe(
          `hosted-sms-verify-kit fraud: --config ${configs[i]}: its function of env did not answer within 10000 ms: does it wait on something that never answers?\n`,
        );
        expect(run.ms).toBeLessThan(20_000);
      });
    });

    // Alone, after the others: its failure comes 1.8 s (scaled) before the process may exit.
    it.sequential(
      'a close that fails after its deadline: the late close said, then why it failed, once, redacted, without a stack',
      async () => {
        // Twice as fast, not ten times: the kit and the store, closed first, may take 0.9 s of real time
        // (a loaded machine) and the failure still comes before the process exits.
        const run = await fraud('fails-late.config.mjs', 2);
        expect(run).toMatchObject({ code: 0, stdout: 'no rules in force\n' });
        expect(run.stderr).toBe(
          'hosted-sms-verify-kit fraud: could not close what the configuration opened: closing did not finish within 10000 ms\n' +
            'hosted-sms-verify-kit fraud: closing what the configuration opened failed after its deadline: ' +
            'pool.end failed: connection to postgres://app:[redacted]@db/app lost ([redacted])\n',
        );
      },
    );

    it('a close that throws: the answer printed, exit 0, its failure one line on stderr without a stack', async () => {
      const run = await fraud('throws.config.mjs');
      expect(run).toMatchObject({ code: 0, stdout: 'no rules in force\n' });
      expect(run.stderr).toBe(
        'hosted-sms-verify-kit fraud: could not close what the configuration opened: pool.end failed\n',
      );
    });
  },
);
