/**
 * The package's `bin` as a scheduler runs it (`hosted-sms-verify-kit sweep --once --config FILE`):
 * a configuration module whose default export is the kit's options sweeps and prints one JSON line;
 * usage mistakes and a bad configuration exit 1 with a message naming the fix, never a stack trace
 * or the secret. (The packed bin, with a configuration that is a function of env, is run by
 * test/package/.) Runs the bin and stores as built: needs `npm run build` (npm test builds dist/
 * first).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../testing/testing.ts';
import { builtFile } from '../support/built.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

// Plain node starts the built bin in under half of what loading the TypeScript through tsx takes.
const MAIN = builtFile('cli/main.js');
const SQLITE = builtFile('middleware/store/sqlite/sqlite.js');
const POSTGRES = builtFile('middleware/store/postgres/postgres.js');
const REPOSITORY_PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));
const CLIENT = {
  clientId: 'bin-client',
  secret: 'bin-secret-0123456789',
  returnUrl: 'http://localhost:3998/verify/return',
};

const USERINFO_SECRET = 'Zm9v/YmFyK2Jheg==';
const UNQUOTED_SECRET = 'sweepSecret0123456789abcdef';
const DATABASE_PASSWORD = 'S3cretPassw0rd';

let dir: string;
let emulator: RunningEmulator;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'verify-bin-'));
  emulator = await startEmulator({ port: 0, clients: [CLIENT], log: () => {} });
  writeFileSync(
    join(dir, 'options.config.mjs'),
    `import { createSqliteStore } from ${JSON.stringify(SQLITE)};
     export default {
       baseUrl: process.env.VERIFY_BASE_URL, clientId: 'bin-client', clientSecret: process.env.VERIFY_CLIENT_SECRET,
       returnUrl: 'http://localhost:3998/verify/return',
       store: createSqliteStore({ database: ${JSON.stringify(join(dir, 'app.sqlite'))} }),
       actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
     };`,
  );
  writeFileSync(join(dir, 'number.config.mjs'), 'export default 42;');
  // The same options with a store whose claim never settles while holding nothing (a custom store's forgotten promise).
  writeFileSync(
    join(dir, 'claim-never.config.mjs'),
    `import options from './options.config.mjs';
     const store = new Proxy(options.store, {
       get: (target, name) =>
         name === 'claimDueAttempts'
           ? () => new Promise(() => {})
           : typeof target[name] === 'function' ? target[name].bind(target) : target[name],
     });
     export default { ...options, store };`,
  );
  // The same options, and a close() that never settles while holding nothing (a forgotten promise).
  writeFileSync(
    join(dir, 'close-never.config.mjs'),
    `import options from './options.config.mjs';
     export default { kit: options, close: () => new Promise(() => {}) };`,
  );
  // { kit, close } with settings it does not take beside them (read as nothing), and one without its close.
  writeFileSync(
    join(dir, 'owning-extra.config.mjs'),
    `import options from './options.config.mjs';
     export default { kit: options, close: () => {}, sweep: { batchSize: 5 }, stopTimeoutMs: 500 };`,
  );
  writeFileSync(
    join(dir, 'owning-no-close.config.mjs'),
    `import options from './options.config.mjs';
     export default { kit: options };`,
  );
  // The same options, from a module that leaves a timer running (as a forgotten metrics flush does).
  writeFileSync(
    join(dir, 'open-handle.config.mjs'),
    `import options from './options.config.mjs';
     setInterval(() => {}, 1000);
     export default options;`,
  );
  // The secret written into baseUrl as userinfo (a `/` in it, as base64 secrets have): the URL does not parse.
  writeFileSync(
    join(dir, 'userinfo.config.mjs'),
    `export default {
       baseUrl: 'https://bin-client:${USERINFO_SECRET}@verify.example.com', clientId: 'bin-client',
       clientSecret: '${USERINFO_SECRET}', returnUrl: 'http://localhost:3998/verify/return',
       store: {}, actions: [],
     };`,
  );
  // A secret pasted without its quotes: the module fails to load with "<secret> is not defined".
  writeFileSync(join(dir, 'unquoted.config.mjs'), `export default { clientSecret: ${UNQUOTED_SECRET} };`);
  // A factory whose error quotes the database URL, password included.
  writeFileSync(
    join(dir, 'database-url.config.mjs'),
    'export default (env) => { throw new Error(`could not reach the database at ${env.DATABASE_URL}`); };',
  );
});
afterAll(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the bin; one still running after 20 s is killed (its code is then NaN). */
function bin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    VERIFY_BASE_URL: emulator.url,
    VERIFY_CLIENT_SECRET: CLIENT.secret,
    DATABASE_URL: `postgres://app:${DATABASE_PASSWORD}@db.internal:5432/app`,
  };
  const options = { cwd: dir, env, timeout: 20_000 };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], options, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

describe('hosted-sms-verify-kit sweep', () => {
  it('with --once and a configuration exporting the kit options: one sweep, one JSON line, exit 0', async () => {
    const run = await bin('sweep', '--once', '--config', './options.config.mjs');
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ event: 'sweep', mode: 'once', claimed: 0, errors: 0 });
    expect(run.stdout + run.stderr).not.toContain(CLIENT.secret);
  });

  it('--once exits when its run is done, even though the configuration left a timer running', async () => {
    const began = Date.now();
    const run = await bin('sweep', '--once', '--config', './open-handle.config.mjs');
    expect(run.code).toBe(0);
    expect(Date.now() - began).toBeLessThan(15_000);
    expect(run.stdout).toContain('"event":"sweep"');
  });

  it('--once with a store whose claim never settles, holding nothing: the run fails within its time budget, sweep_failed, exit 3', async () => {
    const started = Date.now();
    // A process of its own runs on real time: 2 s lets the run reach its first claim on a loaded
    // machine (with 0.1 s a slow start left no time to claim: nothing called, exit 0).
    const run = await bin('sweep', '--once', '--time-budget-seconds', '2', '--config', './claim-never.config.mjs');
    expect(run.code).toBe(3);
    const failed = { event: 'sweep_failed', error: { message: expect.stringContaining('claimDueAttempts did not') } };
    expect(JSON.parse(run.stdout.trim())).toMatchObject(failed);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('--once with a close() that never settles, holding nothing: the sweep line, then sweep_close_failed after 10 s, exit 0', async () => {
    const started = Date.now();
    const run = await bin('sweep', '--once', '--config', './close-never.config.mjs');
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({ event: 'sweep', mode: 'once' }),
      expect.objectContaining({ event: 'sweep_close_failed', closing: 'store' }),
    ]);
    expect(run.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
  });

  it('without --once or --loop it exits 1 saying which to choose, with the usage', async () => {
    const run = await bin('sweep', '--config', './options.config.mjs');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('say --once (one run, for a scheduler) or --loop (keep sweeping).');
    expect(run.stderr).toContain('usage: hosted-sms-verify-kit sweep (--once | --loop) --config');
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('a flag given twice exits 1 naming it and saying to give it once, with the usage, and sweeps nothing', async () => {
    for (const [flag, args] of [
      ['--config', ['--config', './options.config.mjs', '--config', './open-handle.config.mjs']],
      ['--config', ['--config=./options.config.mjs', '--config', './open-handle.config.mjs']],
      ['--batch-size', ['--config', './options.config.mjs', '--batch-size', '5', '--batch-size', '7']],
      ['--lease-seconds', ['--config', './options.config.mjs', '--lease-seconds=30', '--lease-seconds', '60']],
    ] as const) {
      const run = await bin('sweep', '--once', ...args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toContain(`hosted-sms-verify-kit sweep: ${flag} given twice: give it once.`);
      expect(run.stderr).toContain('usage: hosted-sms-verify-kit sweep (--once | --loop) --config');
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stdout, args.join(' ')).toBe('');
    }
  });

  it('a bad value names the flag typed, its unit and a good value; a mistake shows this command and its flags, as --help does', async () => {
    const refused = async (...args: string[]) => {
      const run = await bin('sweep', '--once', '--config', './options.config.mjs', ...args);
      expect(run.code, args.join(' ')).toBe(1);
      const line = JSON.parse(run.stdout) as { event: string; message: string };
      expect(line.event).toBe('sweep_config_error');
      return line.message;
    };
    expect(await refused('--lease-seconds', '0.5')).toBe(
      'sweep job: --lease-seconds must be a number of seconds from 1 to 86400, e.g. --lease-seconds 120; got "0.5".',
    );
    expect(await refused('--batch-size', '5000')).toBe(
      'sweep job: --batch-size must be a whole number from 1 to 1000, e.g. --batch-size 50; got "5000".',
    );
    expect(await refused('--concurrency', '100')).toBe(
      'sweep job: --concurrency must be a whole number from 1 to 64, e.g. --concurrency 4; got "100".',
    );
    expect(await refused('--time-budget-seconds', '0.05')).toBe(
      'sweep job: --time-budget-seconds must be a number of seconds from 0.1 to 86400, e.g. --time-budget-seconds 60; got "0.05".',
    );
    const help = await bin('sweep', '--help');
    const [synopsis] = help.stdout.split('\n');
    expect(synopsis).toBe(
      'usage: hosted-sms-verify-kit sweep (--once | --loop) --config ./verify.config.js [--interval-seconds N] ' +
        '[--batch-size N] [--concurrency N] [--time-budget-seconds N] [--lease-seconds N] [--max-reads-per-second N] [--nice N]',
    );
    expect(await refused('--bacth-size', '5')).toBe(`sweep job: Unknown option '--bacth-size'. ${synopsis}`);
  });

  it('a missing configuration file, or one exporting neither options nor a kit, is a configuration error (exit 1)', async () => {
    const missing = await bin('sweep', '--once', '--config', './nope.mjs');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toEqual({
      event: 'sweep_config_error',
      message: `--config ./nope.mjs: no such file (looked at ${join(dir, 'nope.mjs')}).`,
    });
    const number = await bin('sweep', '--once', '--config', './number.config.mjs');
    expect(number.code).toBe(1);
    expect(JSON.parse(number.stdout).message).toContain("its default export must be the kit's options, a kit");
  });

  it('{ kit, close } with a setting it does not take, or without close, is a configuration error naming the fix (exit 1)', async () => {
    const extra = await bin('sweep', '--once', '--config', './owning-extra.config.mjs');
    expect(extra.code).toBe(1);
    expect(JSON.parse(extra.stdout)).toEqual({
      event: 'sweep_config_error',
      message:
        '--config ./owning-extra.config.mjs: its default export { kit, close }: "sweep", "stopTimeoutMs" are not taken ' +
        "there (the job's settings are its flags or SWEEP_* variables, the kit's go in `kit`).",
    });
    const noClose = await bin('sweep', '--once', '--config', './owning-no-close.config.mjs');
    expect(noClose.code).toBe(1);
    expect(JSON.parse(noClose.stdout)).toEqual({
      event: 'sweep_config_error',
      message:
        '--config ./owning-no-close.config.mjs: its default export { kit, close }: `close` must be a function, what to ' +
        'release at the end (e.g. () => pool.end()); with nothing to release, export the kit or its options alone.',
    });
  });

  it('a configuration whose baseUrl carries the secret is a configuration error whose line never shows it', async () => {
    const run = await bin('sweep', '--once', '--config', './userinfo.config.mjs');
    expect(run.code).toBe(1);
    const line = JSON.parse(run.stdout) as { event: string; message: string };
    expect(line).toMatchObject({ event: 'sweep_config_error' });
    expect(line.message).toContain('`baseUrl`');
    expect(run.stdout + run.stderr).not.toContain(USERINFO_SECRET);
    expect(run.stdout + run.stderr).not.toContain('Zm9v');
  });

  it('a secret pasted without its quotes is a configuration error whose line says where, never what', async () => {
    const run = await bin('sweep', '--once', '--config', './unquoted.config.mjs');
    expect(run.code).toBe(1);
    const line = JSON.parse(run.stdout) as { event: string; message: string };
    expect(line.event).toBe('sweep_config_error');
    expect(line.message).toMatch(
      /^ReferenceError at file:\/\/\S+unquoted\.config\.mjs:\d+:\d+: its message is not shown/,
    );
    expect(run.stdout + run.stderr).not.toContain(UNQUOTED_SECRET.slice(0, 8));
  });

  it('a configuration error quoting the database URL shows the URL without its password', async () => {
    const run = await bin('sweep', '--once', '--config', './database-url.config.mjs');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      event: 'sweep_config_error',
      message: 'could not reach the database at postgres://app:[redacted]@db.internal:5432/app',
    });
    expect(run.stdout + run.stderr).not.toContain(DATABASE_PASSWORD);
  });

  it('an unknown command exits 1 listing the commands', async () => {
    const run = await bin('sweeep');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Unknown command "sweeep"[\s\S]*\n {2}sweep {6}[\s\S]*\n {2}emulator {3}/);
  });

  it('an unknown command that is no word (a secret, a number, megabytes) exits 1 without quoting it', async () => {
    const notShown = 'Unknown command (the first argument, not shown: a command is a word, such as sweep).';
    for (const first of [CLIENT.secret, UNQUOTED_SECRET, '+447700900123', 'x'.repeat(100_000)]) {
      const run = await bin(first, '--once');
      expect(run.code).toBe(1);
      expect(run.stderr.split('\n')[0]).toBe(notShown);
      expect(run.stderr).not.toContain(first);
      expect(run.stderr.length).toBeLessThan(2000);
    }
  });

  describe.skipIf(postgresUnavailable !== undefined)('on PostgreSQL', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
      // The app's own Pool, as an integrator's config makes it: the job must end it, or it keeps
      // the process alive until its idle connections time out (10 s by default).
      writeFileSync(
        join(dir, 'postgres.config.mjs'),
        `import { createRequire } from 'node:module';
         import { writeFileSync } from 'node:fs';
         import { createPostgresStore } from ${JSON.stringify(POSTGRES)};
         const pg = createRequire(${JSON.stringify(REPOSITORY_PACKAGE)})('pg');
         const pool = new pg.Pool({ connectionString: ${JSON.stringify(database.url)} });
         export default {
           kit: {
             baseUrl: process.env.VERIFY_BASE_URL, clientId: 'bin-client', clientSecret: process.env.VERIFY_CLIENT_SECRET,
             returnUrl: 'http://localhost:3998/verify/return',
             store: createPostgresStore({ pool }),
             actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
           },
           close: async () => { await pool.end(); writeFileSync('pool-ended', 'yes'); },
         };`,
      );
    });
    afterAll(async () => {
      await database?.drop();
    });

    it('a configuration exporting { kit, close }: --once ends the pool it made, after the store', async () => {
      const run = await bin('sweep', '--once', '--config', './postgres.config.mjs');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout.trim())).toMatchObject({ event: 'sweep', mode: 'once' });
      // Ended by the job, so nothing holds the process open for the pool's idle timeout.
      expect(readFileSync(join(dir, 'pool-ended'), 'utf8')).toBe('yes');
    });
  });
});
