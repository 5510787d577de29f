/**
 * `hosted-sms-verify-kit fraud` on the store the configuration names (the sweep job's module), on
 * SQLite and PostgreSQL: lists what trips now with counts and thresholds (or that nothing does, and
 * how many operator rules are in force), blocks and releases a number block and a country (the next
 * start on that store is refused or sent), lists the rules and the decisions, and refuses a usage
 * mistake with exit code 1, naming the fix, without a stack. The bin runs as its own process where
 * the process is what is proven (it loads the configuration on each store and exits 0 with nothing on
 * stderr; a refusal is the same text and exit code as the dispatcher's in this process); the rest runs
 * the built dispatcher here, on the same arguments and environment, reading what it prints and its
 * exit code. fraud-command-config.test.ts runs the configurations whose own code fails or hangs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { PumpingKey, VerifyStore } from '../../middleware/store/types.ts';
import { fraudBin, fraudHere, writeFraudConfigs } from '../support/fraud-command.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

const HOUR = 3_600_000;

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

// Each run of the bin is a node process of its own, a second or more apiece on a busy machine: three per store.
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
    // The same options on a store of its own where nothing was ever counted.
    emptyDatabase = kind.name === 'postgres' ? await createTestDatabase() : undefined;
    writeFraudConfigs(
      dir,
      kind.name,
      kind.name === 'postgres' ? url : file,
      emptyDatabase?.url ?? join(dir, 'empty.sqlite'),
    );
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

  const bin = (...args: string[]) => fraudBin(dir, ...args);
  const runWith = (config: string, ...args: string[]) => fraudHere(dir, config, ...args);
  const run = (...args: string[]) => fraudHere(dir, 'verify.config.mjs', ...args);

  it('lists what trips now with its counts and thresholds, as lines and as JSON', async () => {
    const lines = await bin('tripped');
    expect(lines).toMatchObject({ code: 0, stderr: '' });
    expect(lines.stdout).toMatch(
      /^country NG: country_hourly; unverified \d+(\.\d)? in the last hour \(threshold 3\.3\), 5 in 24 h \(threshold 20\)$/m,
    );
    const json = await run('tripped', '--json');
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ dimension: 'country', key: 'NG', reasons: ['country_hourly'], unverifiedLastDay: 5 }),
    ]);
  });

  it("reads the kit's options with their own pumping option, judged by their thresholds", async () => {
    const lines = await runWith('refusing.config.mjs', 'tripped');
    expect(lines).toMatchObject({ code: 0, stderr: '' });
    expect(lines.stdout).toMatch(/^country NG: country_hourly; .*, 5 in 24 h \(threshold 12\)$/m);
  });

  it('blocks a number block and releases a country on the store every instance reads, then lists and clears them', async () => {
    expect((await run('block', '--block', '+33612345', '--hours', '2')).stdout).toMatch(
      /^blocked block \+33612345 until /,
    );
    expect((await run('release', '--country', 'NG')).stdout).toMatch(/^released country NG until /);
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
    expect((await run('tripped')).stdout).toContain('(released by an operator)');
    const rules = await run('rules');
    expect(rules.stdout).toMatch(/blocked block \+33612345 until/);
    expect((await run('clear', '--block', '+33612345')).stdout).toBe('cleared\n');
    expect((await run('clear', '--block', '+33612345')).stdout).toBe('there was no block or release on it\n');
    expect((await run('days', '--json')).stdout).toContain('"key":"NG"');
  });

  it('says when nothing trips while operator rules are in force on keys with no traffic, and how to list them; its JSON stays the list', async () => {
    expect(await runWith('empty.config.mjs', 'tripped')).toEqual({
      code: 0,
      stdout: 'nothing trips now\n',
      stderr: '',
    });
    await runWith('empty.config.mjs', 'block', '--block', '+33612999');
    expect(await runWith('empty.config.mjs', 'tripped')).toEqual({
      code: 0,
      stdout: 'nothing trips now; 1 operator rule in force: fraud rules lists it\n',
      stderr: '',
    });
    await runWith('empty.config.mjs', 'release', '--country', 'FR');
    expect((await runWith('empty.config.mjs', 'tripped')).stdout).toBe(
      'nothing trips now; 2 operator rules in force: fraud rules lists them\n',
    );
    expect(await runWith('empty.config.mjs', 'tripped', '--json')).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
    await runWith('empty.config.mjs', 'clear', '--block', '+33612999');
    await runWith('empty.config.mjs', 'clear', '--country', 'FR');
  });

  it('days where nothing was counted says so (by country and by block), exit 0, not a blank line', async () => {
    for (const by of ['country', 'block']) {
      const answer = await runWith('empty.config.mjs', 'days', '--by', by, '--days', '3');
      expect(answer).toEqual({ code: 0, stdout: `no texts counted in those days (by ${by})\n`, stderr: '' });
    }
    expect(await runWith('empty.config.mjs', 'days', '--json')).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
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
    const two = await run('decisions', '--hours', '1', '--limit', '2');
    expect(two.code).toBe(0);
    const lines = two.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/ refused CM \+23767123 from 192\.0\.2\.0: country_hourly$/),
      expect.stringMatching(/ refused CM \+23767123 from 192\.0\.2\.1: country_hourly$/),
      'the newest 2 shown; --limit N for more',
    ]);
    expect(JSON.parse((await run('decisions', '--limit', '2', '--json')).stdout)).toHaveLength(2);
    const all = (await run('decisions', '--hours', '1')).stdout;
    expect(all).toContain('from 192.0.2.2');
    expect(all).not.toContain('--limit N for more');
  });

  it('shows a userRef that is a phone number masked, in decisions and rules, as lines and as JSON; an id with digits whole', async () => {
    // An app that keys users by the number they signed up with: the number is the userRef.
    await store.pumping!.recordDecision({
      decision: 'refused',
      reasons: ['country_hourly'],
      country: 'GB',
      block: '+447700900',
      decidedAt: Date.now(),
      address: '192.0.2.77',
      userRef: '+447700900123',
    });
    const uuid = '550e8400-e29b-41d4-a716-446655440000';
    const blocked = await run('block', '--user', '+447700900456', '--hours', '1');
    expect(blocked).toMatchObject({ code: 0, stderr: '' });
    expect(blocked.stdout).toMatch(/^blocked user ••\u00a056 until /);
    await run('block', '--user', uuid, '--hours', '1');
    const shown = [
      (await run('decisions', '--json')).stdout,
      (await run('rules')).stdout,
      (await run('rules', '--json')).stdout,
      (await run('release', '--user', '+447700900456', '--json')).stdout,
    ].join('\n');
    expect(shown).not.toMatch(/7700 ?900 ?(123|456)/);
    expect(JSON.parse((await run('decisions', '--json')).stdout)).toContainEqual(
      expect.objectContaining({ address: '192.0.2.77', userRef: '••\u00a023' }),
    );
    expect(shown).toMatch(/blocked user ••\u00a056 until /);
    expect(shown).toContain(`blocked user ${uuid} until `);
    await run('clear', '--user', '+447700900456');
    await run('clear', '--user', uuid);
    expect((await run('rules', '--json')).stdout).not.toMatch(/"user"/);
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
      [
        ['block', '--block=+447400123456'],
        /unknown option "--block=" \(its value not repeated\): give --block its value after a space/,
      ],
      [['block', '--country', '+44 7400 123456'], /ISO 3166-1 alpha-2/],
      [['block', '--address', '07400 123456'], /IPv4 address or an IPv6 address/],
      [['block', '--country', 'GH', '--hours', '447400123456'], /--hours is at most 8784/],
      // A flag the command does not read is refused, not ignored.
      [['tripped', '--country', 'NG'], /tripped does not take --country: it takes only --json/],
      [['decisions', '--days', '3'], /decisions does not take --days: it takes --hours/],
      [['clear', '--country', 'NG', '--hours', '2'], /clear does not take --hours: it takes --country, --block/],
      [['days', '--hours', '2'], /days does not take --hours: it takes --by, --days/],
    ] as const) {
      const answer = await run(...args);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr).toMatch(message);
      expect(answer.stderr).not.toMatch(/\n\s+at /);
      expect(answer.stderr).not.toContain('fraud-secret');
      expect(answer.stderr).not.toMatch(/7400 ?123456|7700900123/);
    }
    // The bin, a process of its own, refuses as the dispatcher does here: exit 1, the same text.
    const refused = ['block', '+447700900123'];
    expect(await bin(...refused)).toEqual(await run(...refused));
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
      const answer = await run(...args);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr, args.join(' ')).toMatch(message);
      expect(answer.stderr).toContain('usage: hosted-sms-verify-kit fraud');
      expect(answer.stderr).not.toMatch(/\n\s+at /);
      expect(answer.stdout, args.join(' ')).toBe('');
    }
    const twice = ['decisions', '--hours', '2', '--hours', '48'];
    expect(await bin(...twice)).toEqual(await run(...twice));
    // Nothing was blocked by a refused call.
    expect((await run('rules', '--json')).stdout).not.toMatch(/GH/);
  });

  it('refuses a target named twice (two countries, two blocks) with exit code 1, and blocks neither', async () => {
    for (const args of [
      ['block', '--country', 'GH', '--country', 'CM'],
      ['release', '--block', '+23320000', '--block', '+23320001'],
      ['clear', '--user', 'u-1', '--user', 'u-2'],
    ]) {
      const answer = await run(...args);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr).toMatch(/given twice/);
    }
    const rules = await run('rules', '--json');
    expect(rules.stdout).not.toMatch(/GH|CM|\+2332000/);
  });
});
