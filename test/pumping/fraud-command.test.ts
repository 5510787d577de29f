/**
 * `hosted-sms-verify-kit fraud` on the store the configuration names (the sweep job's module), on
 * SQLite and PostgreSQL: lists what trips now with counts and thresholds (or that nothing does, and
 * how many operator rules are in force), blocks and releases a number block and a country (the next
 * start on that store is refused or sent), lists the rules and the decisions, and refuses a usage
 * mistake with exit code 1, naming the fix, without a stack.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { PumpingKey, VerifyStore } from '../../middleware/store/types.ts';
import { builtFile } from '../support/built.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

// The package's bin and stores as built (`npm test` builds dist/ first): plain node starts the bin in
// under half of what loading the TypeScript through tsx takes, and this suite runs it 26 times.
const MAIN = builtFile('cli/main.js');
const SQLITE = builtFile('middleware/store/sqlite/sqlite.js');
const POSTGRES = builtFile('middleware/store/postgres/postgres.js');
const HOUR = 3_600_000;
// The configuration module sits outside the repository: it names the driver by its path.
const PG = createRequire(import.meta.url).resolve('pg');

const KINDS = [
  { name: 'sqlite', unavailable: undefined },
  { name: 'postgres', unavailable: postgresUnavailable },
] as const;

function nigerian(n: number): PumpingKey[] {
  const address = `198.51.100.${n}`;
  return [
    { dimension: 'country', key: 'NG' },
    { dimension: 'block', key: `+234803${n}000` },
    { dimension: 'address', key: address },
    { dimension: 'user', key: `u${n}` },
    { dimension: 'address_country', key: `${address} NG` },
  ];
}

// Each run of the bin is a node process of its own: a second or more apiece on a busy machine.
describe.each(KINDS)('hosted-sms-verify-kit fraud on $name', { timeout: 120_000 }, (kind) => {
  if (kind.unavailable !== undefined) {
    it.skip(`not run: ${kind.unavailable}`, () => {});
    return;
  }
  let dir: string;
  let store: VerifyStore<unknown>;
  let database: TestDatabase | undefined;
  let emptyDatabase: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let url = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verify-fraud-'));
    const file = join(dir, 'app.sqlite');
    if (kind.name === 'postgres') {
      database = await createTestDatabase();
      url = database.url;
      pool = new pg.Pool({ connectionString: url });
      store = createPostgresStore({ pool });
    } else {
      store = createSqliteStore({ database: file });
    }
    // A configuration module on the store at `at` (a database URL, or a SQLite file).
    const opened = (at: string) =>
      kind.name === 'postgres'
        ? `import pg from ${JSON.stringify(PG)}; import { createPostgresStore } from ${JSON.stringify(POSTGRES)};
           const pool = new pg.Pool({ connectionString: ${JSON.stringify(at)} });
           export default { close: () => pool.end(), kit: {`
        : `import { createSqliteStore } from ${JSON.stringify(SQLITE)};
           export default { close: () => {}, kit: {`;
    const storeLine = (at: string) =>
      kind.name === 'postgres'
        ? 'store: createPostgresStore({ pool }),'
        : `store: createSqliteStore({ database: ${JSON.stringify(at)} }),`;
    const optionsOn = (at: string) => `${opened(at)}
         baseUrl: 'http://127.0.0.1:9', clientId: 'fraud-client', clientSecret: 'fraud-secret-0123456789abcdef',
         returnUrl: 'http://localhost:3998/verify/return', ${storeLine(at)}
         actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],`;
    const options = optionsOn(kind.name === 'postgres' ? url : file);
    writeFileSync(join(dir, 'verify.config.mjs'), `${options} } };`);
    // The kit's options with its own \`pumping\` option (an object, as a ready kit's \`pumping\` is).
    writeFileSync(
      join(dir, 'refusing.config.mjs'),
      `${options} pumping: { mode: 'refuse', thresholds: { country: { dailyFloor: 12 } } } } };`,
    );
    // The same options on a store of its own where nothing was ever counted.
    emptyDatabase = kind.name === 'postgres' ? await createTestDatabase() : undefined;
    writeFileSync(join(dir, 'empty.config.mjs'), `${optionsOn(emptyDatabase?.url ?? join(dir, 'empty.sqlite'))} } };`);
    const hour = Math.floor(Date.now() / HOUR);
    for (let n = 1; n <= 5; n++) await store.pumping!.recordSend({ sessionId: `s${n}`, keys: nigerian(n), hour });
  });
  afterAll(async () => {
    await store?.close();
    await pool?.end();
    await database?.drop();
    await emptyDatabase?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  function bin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return binWith('verify.config.mjs', ...args);
  }

  function binWith(config: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const options = { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 };
    return new Promise((resolve) => {
      execFile(process.execPath, [MAIN, 'fraud', ...args, '--config', config], options, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
      );
    });
  }

  it('lists what trips now with its counts and thresholds, as lines and as JSON', async () => {
    const lines = await bin('tripped');
    expect(lines).toMatchObject({ code: 0, stderr: '' });
    expect(lines.stdout).toMatch(
      /^country NG: country_hourly; unverified \d+(\.\d)? in the last hour \(threshold 3\.3\), 5 in 24 h \(threshold 20\)$/m,
    );
    const json = await bin('tripped', '--json');
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ dimension: 'country', key: 'NG', reasons: ['country_hourly'], unverifiedLastDay: 5 }),
    ]);
  });

  it("reads the kit's options with their own pumping option, judged by their thresholds", async () => {
    const lines = await binWith('refusing.config.mjs', 'tripped');
    expect(lines).toMatchObject({ code: 0, stderr: '' });
    expect(lines.stdout).toMatch(/^country NG: country_hourly; .*, 5 in 24 h \(threshold 12\)$/m);
  });

  it('blocks a number block and releases a country on the store every instance reads, then lists and clears them', async () => {
    expect((await bin('block', '--block', '+33612345', '--hours', '2')).stdout).toMatch(
      /^blocked block \+33612345 until /,
    );
    expect((await bin('release', '--country', 'NG')).stdout).toMatch(/^released country NG until /);
    const now = Date.now();
    const reading = await store.pumping!.readPumping({
      keys: [
        { dimension: 'block', key: '+33612345' },
        { dimension: 'country', key: 'NG' },
      ],
      address: '',
      hour: Math.floor(now / HOUR),
      now,
    });
    expect(reading.rules.map((r) => `${r.key} ${r.rule}`).sort()).toEqual(['+33612345 block', 'NG allow']);
    expect((await bin('tripped')).stdout).toContain('(released by an operator)');
    const rules = await bin('rules');
    expect(rules.stdout).toMatch(/blocked block \+33612345 until/);
    expect((await bin('clear', '--block', '+33612345')).stdout).toBe('cleared\n');
    expect((await bin('clear', '--block', '+33612345')).stdout).toBe('there was no block or release on it\n');
    expect((await bin('days', '--json')).stdout).toContain('"key":"NG"');
  });

  it('says when nothing trips while operator rules are in force on keys with no traffic, and how to list them; its JSON stays the list', async () => {
    expect(await binWith('empty.config.mjs', 'tripped')).toEqual({
      code: 0,
      stdout: 'nothing trips now\n',
      stderr: '',
    });
    await binWith('empty.config.mjs', 'block', '--block', '+33612999');
    expect(await binWith('empty.config.mjs', 'tripped')).toEqual({
      code: 0,
      stdout: 'nothing trips now; 1 operator rule in force: fraud rules lists it\n',
      stderr: '',
    });
    await binWith('empty.config.mjs', 'release', '--country', 'FR');
    expect((await binWith('empty.config.mjs', 'tripped')).stdout).toBe(
      'nothing trips now; 2 operator rules in force: fraud rules lists them\n',
    );
    expect(await binWith('empty.config.mjs', 'tripped', '--json')).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
    await binWith('empty.config.mjs', 'clear', '--block', '+33612999');
    await binWith('empty.config.mjs', 'clear', '--country', 'FR');
  });

  it('days where nothing was counted says so (by country and by block), exit 0, not a blank line', async () => {
    for (const by of ['country', 'block']) {
      const run = await binWith('empty.config.mjs', 'days', '--by', by, '--days', '3');
      expect(run).toEqual({ code: 0, stdout: `no texts counted in those days (by ${by})\n`, stderr: '' });
    }
    expect(await binWith('empty.config.mjs', 'days', '--json')).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });

  it('lists at most --limit decisions (100 by default), newest first, saying when there may be more', async () => {
    const now = Date.now();
    for (let n = 0; n < 3; n++) {
      await store.pumping!.recordDecision({
        decision: 'refused',
        reasons: ['country_hourly'],
        country: 'CM',
        block: '+23767123',
        decidedAt: now - n,
        address: `192.0.2.${n}`,
        userRef: 'u',
      });
    }
    const two = await bin('decisions', '--hours', '1', '--limit', '2');
    expect(two.code).toBe(0);
    const lines = two.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/ refused CM \+23767123 from 192\.0\.2\.0: country_hourly$/),
      expect.stringMatching(/ refused CM \+23767123 from 192\.0\.2\.1: country_hourly$/),
      'the newest 2 shown; --limit N for more',
    ]);
    expect(JSON.parse((await bin('decisions', '--limit', '2', '--json')).stdout)).toHaveLength(2);
    const all = (await bin('decisions', '--hours', '1')).stdout;
    expect(all).toContain('from 192.0.2.2');
    expect(all).not.toContain('--limit N for more');
  });

  it('refuses a usage mistake with exit code 1, naming the fix, without a stack trace', async () => {
    for (const [args, message] of [
      [['block'], /needs exactly one target/],
      [['block', '--country', 'Nigeria'], /ISO 3166-1 alpha-2/],
      [['explode'], /say what: one of tripped/],
      [['decisions', '--hours', 'soon'], /--hours needs a positive number/],
      // Decimal only: Number() reads 0x10 as 16 hours.
      [['block', '--country', 'GH', '--hours', '0x10'], /--hours needs a positive number/],
      [['block', '--address', 'garbage'], /IPv4 address or an IPv6 address/],
      // A whole number given as a block is refused without being printed back.
      [['block', '--block', '+44 7400 123456'], /block must be "\+" and digits only/],
      [['release', '--block', '+447700900123'], /this is a whole number; its block is "\+447700900"/],
      [['block', '+447700900123'], /a value was given without its flag: name a target with --country, --block/],
      [['tripped', '--json', '+44 7400 123456'], /a value was given without its flag/],
      [['tripped', '-x'], /unknown option "-x"/],
      // A number given where a flag, a country, an address or a count goes is not printed back either.
      [['block', '--block=+447400123456'], /unknown option a value not repeated here/],
      [['block', '--country', '+44 7400 123456'], /ISO 3166-1 alpha-2/],
      [['block', '--address', '07400 123456'], /IPv4 address or an IPv6 address/],
      [['block', '--country', 'GH', '--hours', '447400123456'], /--hours is at most 8784/],
      // A flag the command does not read is refused, not ignored.
      [['tripped', '--country', 'NG'], /tripped does not take --country: it takes only --json/],
      [['decisions', '--days', '3'], /decisions does not take --days: it takes --hours/],
      [['clear', '--country', 'NG', '--hours', '2'], /clear does not take --hours: it takes --country, --block/],
      [['days', '--hours', '2'], /days does not take --hours: it takes --by, --days/],
    ] as const) {
      const answer = await bin(...args);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr).toMatch(message);
      expect(answer.stderr).not.toMatch(/\n\s+at /);
      expect(answer.stderr).not.toContain('fraud-secret');
      expect(answer.stderr).not.toMatch(/7400 ?123456|7700900123/);
    }
  });

  it('refuses a value flag given twice, and a value out of its range, with exit code 1 naming the fix, never one silently taken or capped', async () => {
    for (const [args, message] of [
      [['decisions', '--hours', '2', '--hours', '48'], /--hours given twice: give it once/],
      [['decisions', '--limit', '5', '--limit', '50'], /--limit given twice: give it once/],
      [['days', '--days', '3', '--days', '7'], /--days given twice: give it once/],
      [['days', '--by', 'block', '--by', 'country'], /--by given twice: give it once/],
      [['block', '--country', 'GH', '--hours', '1', '--hours', '2'], /--hours given twice: give it once/],
      [['days', '--days', '16'], /--days is at most 15 \(the days the counters keep\); got 16/],
      [['decisions', '--limit', '10001'], /--limit is at most 10000; got 10001/],
      [['decisions', '--hours', '9000'], /--hours is at most 8784 \(a year\); got 9000/],
      [['block', '--country', 'GH', '--hours', '9000'], /--hours is at most 8784 \(a year\); got 9000/],
    ] as const) {
      const answer = await bin(...args);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr, args.join(' ')).toMatch(message);
      expect(answer.stderr).toContain('usage: hosted-sms-verify-kit fraud');
      expect(answer.stderr).not.toMatch(/\n\s+at /);
      expect(answer.stdout, args.join(' ')).toBe('');
    }
    // Nothing was blocked by a refused call.
    expect((await bin('rules', '--json')).stdout).not.toMatch(/GH/);
  });

  it('refuses a target named twice (two countries, two blocks) with exit code 1, and blocks neither', async () => {
    for (const args of [
      ['block', '--country', 'GH', '--country', 'CM'],
      ['release', '--block', '+23320000', '--block', '+23320001'],
      ['clear', '--user', 'u-1', '--user', 'u-2'],
    ]) {
      const answer = await bin(...args);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr).toMatch(/given twice/);
    }
    const rules = await bin('rules', '--json');
    expect(rules.stdout).not.toMatch(/GH|CM|\+2332000/);
  });
});

describe(
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

describe('hosted-sms-verify-kit fraud, a configuration whose code hangs or throws', { timeout: 60_000 }, () => {
  const SCALED_TIMERS = fileURLToPath(new URL('../fixtures/scaled-timers.mjs', import.meta.url));
  const TIMER_SCALE = 10;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'verify-fraud-close-'));
    const config = (close: string) => `import { createSqliteStore } from ${JSON.stringify(SQLITE)};
      export default { close: ${close}, kit: {
        baseUrl: 'http://127.0.0.1:9', clientId: 'fraud-client', clientSecret: 'fraud-secret-0123456789abcdef',
        returnUrl: 'http://localhost:3998/verify/return',
        store: createSqliteStore({ database: ${JSON.stringify(join(dir, 'app.sqlite'))} }),
        actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
      } };`;
    // Never settles, and keeps a timer that would keep the process alive.
    writeFileSync(join(dir, 'hangs.config.mjs'), config('() => new Promise(() => setInterval(() => {}, 1000))'));
    writeFileSync(join(dir, 'throws.config.mjs'), config("() => { throw new Error('pool.end failed'); }"));
    // Fails 0.4 s after the close's 10 s deadline (counted from when the kit and its store are closed),
    // within the 2 s a finished command waits before it exits.
    writeFileSync(
      join(dir, 'fails-late.config.mjs'),
      config(
        "() => new Promise((_resolve, reject) => setTimeout(() => reject(new Error('pool.end failed: connection to postgres://app:pw-0123@db/app lost (fraud-secret-0123456789abcdef)')), 10_400))",
      ),
    );
    // Never settles, and holds nothing at all (a forgotten promise).
    writeFileSync(join(dir, 'closes-never.config.mjs'), config('() => new Promise(() => {})'));
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

  it('a close that fails after its deadline: the late close said, then why it failed, once, redacted, without a stack', async () => {
    // Four times faster, not ten: the kit and the store, closed first, may take 0.4 s and the failure still comes in time.
    const run = await fraud('fails-late.config.mjs', 4);
    expect(run).toMatchObject({ code: 0, stdout: 'no rules in force\n' });
    expect(run.stderr).toBe(
      'hosted-sms-verify-kit fraud: could not close what the configuration opened: closing did not finish within 10000 ms\n' +
        'hosted-sms-verify-kit fraud: closing what the configuration opened failed after its deadline: ' +
        'pool.end failed: connection to postgres://app:[redacted]@db/app lost ([redacted])\n',
    );
  });

  it('a close that throws: the answer printed, exit 0, its failure one line on stderr without a stack', async () => {
    const run = await fraud('throws.config.mjs');
    expect(run).toMatchObject({ code: 0, stdout: 'no rules in force\n' });
    expect(run.stderr).toBe(
      'hosted-sms-verify-kit fraud: could not close what the configuration opened: pool.end failed\n',
    );
  });
});
