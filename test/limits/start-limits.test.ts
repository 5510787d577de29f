import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createHash } from 'node:crypto';
import express, { type Request } from 'express';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { destinationBudgetKey, ipBudgetKey } from '../../middleware/limits/limit-keys.ts';
import { normaliseDestination } from '../../middleware/numbers/number-spelling.ts';
import { createStartLimits } from '../../middleware/limits/start-limits.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

let dir: string;
let db: BetterSqlite3.Database;
const fromIp = (ip: string) => ({ ip }) as Request;
const KEY = 'a-server-side-key-of-at-least-32-characters';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-limits-'));
  db = new BetterSqlite3(join(dir, 'app.sqlite'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function outcome(promise: Promise<unknown>) {
  return promise.then(
    () => 'allowed',
    (error: { code: string; retryAfterSeconds: number }) => `${error.code} ${error.retryAfterSeconds}`,
  );
}

describe('start limits against SMS pumping', () => {
  it('by default allow a user 10 starts an hour, an address 30 an hour and a user 5 distinct numbers a day', async () => {
    const limits = createStartLimits({ store: createSqliteStore({ database: db }), destinationKey: KEY });
    const start = (ip: string, userRef: string, destination: string) =>
      outcome(limits.consume(fromIp(ip), { userRef, destination }));
    // One user, two numbers, each its own address: the user's eleventh start is refused.
    const byUser = [];
    for (let i = 0; i < 11; i++) byUser.push(await start(`10.1.0.${i}`, 'one-user', `+1555010010${i % 2}`));
    expect(byUser.slice(0, 10).every((r) => r === 'allowed')).toBe(true);
    expect(byUser[10]).toBe('rate_limited 3600');
    // One address, a user and a number each: its thirty-first start is refused.
    const byAddress = [];
    for (let i = 0; i < 31; i++)
      byAddress.push(await start('10.2.0.1', `user-${i}`, `+155502${String(i).padStart(5, '0')}`));
    expect(byAddress.slice(0, 30).every((r) => r === 'allowed')).toBe(true);
    expect(byAddress[30]).toBe('rate_limited 3600');
    // One user's sixth distinct number in a day is refused.
    const byNumbers = [];
    for (let i = 0; i < 6; i++) byNumbers.push(await start(`10.3.0.${i}`, 'many-numbers', `+155503000${i}`));
    expect(byNumbers.slice(0, 5).every((r) => r === 'allowed')).toBe(true);
    expect(byNumbers[5]).toBe('rate_limited 86400');
  });

  it('stops a user after their budget and says when to retry', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perUser: { points: 2, durationSeconds: 600 },
    });
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(
        await outcome(limits.consume(fromIp(`10.0.0.${i}`), { userRef: 'u1', destination: `+1555010000${i}` })),
      );
    expect(results).toEqual(['allowed', 'allowed', 'rate_limited 600']);
    expect(await outcome(limits.consume(fromIp('10.0.0.9'), { userRef: 'u2', destination: '+15550100009' }))).toBe(
      'allowed',
    );
  });

  it('stops texts to one destination whoever asks, and keeps no phone number in clear', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perDestination: { points: 3, durationSeconds: 3600 },
    });
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push(
        await outcome(limits.consume(fromIp(`10.0.1.${i}`), { userRef: `u${i}`, destination: '+15550199999' })),
      );
    expect(results.at(-1)).toMatch(/^rate_limited /);
    expect(results.slice(0, 3)).toEqual(['allowed', 'allowed', 'allowed']);
    // SQL: what lies in the counters table is the point, and the store has no read of it.
    const keys = db.prepare('SELECT key FROM verify_kit_start_budgets').all() as { key: string }[];
    expect(keys.map((k) => k.key).join(' ')).not.toContain('5550199999');
  });

  it('stops one client IP across users and destinations', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perIp: { points: 3, durationSeconds: 3600 },
    });
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push(
        await outcome(limits.consume(fromIp('203.0.113.7'), { userRef: `u${i}`, destination: `+1555020000${i}` })),
      );
    expect(results).toEqual(['allowed', 'allowed', 'allowed', expect.stringMatching(/^rate_limited /)]);
  });

  it('keeps counting across a restart, because the counters live in the database file', async () => {
    const before = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perUser: { points: 1, durationSeconds: 600 },
    });
    expect(await outcome(before.consume(fromIp('10.0.0.1'), { userRef: 'u1', destination: '+15550100001' }))).toBe(
      'allowed',
    );
    db.close();
    db = new BetterSqlite3(join(dir, 'app.sqlite'));
    const after = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perUser: { points: 1, durationSeconds: 600 },
    });
    expect(await outcome(after.consume(fromIp('10.0.0.1'), { userRef: 'u1', destination: '+15550100002' }))).toMatch(
      /^rate_limited /,
    );
  });

  it('refuses options it cannot use, saying how to fix them', () => {
    expect(() => createStartLimits({ destinationKey: KEY })).toThrow(/need `store`/);
    // The SQLite store lives in its own entry, so a `database` is refused with the call that replaces it.
    expect(() => createStartLimits({ database: db, destinationKey: KEY } as object)).toThrow(
      /pass `store: createSqliteStore\(\{ database \}\)` from 'hosted-sms-verify-kit\/sqlite'/,
    );
    expect(() => createStartLimits({ store: createSqliteStore({ database: db }) })).toThrow(/need `destinationKey`/);
    expect(() =>
      createStartLimits({ store: createSqliteStore({ database: db }), destinationKey: 'too-short' }),
    ).toThrow(/at least 32 characters/);
    expect(() =>
      createStartLimits({ store: createSqliteStore({ database: db }), destinationKey: KEY, ipv6Subnet: 8 }),
    ).toThrow(/from 16 to 128/);
    expect(() =>
      createStartLimits({
        store: createSqliteStore({ database: db }),
        destinationKey: KEY,
        perIp: { points: 0, durationSeconds: 60 },
      }),
    ).toThrow(/positive whole `points`/);
    // The stores count in 32-bit integers: a budget they cannot hold is refused when the kit is built.
    expect(() =>
      createStartLimits({
        store: createSqliteStore({ database: db }),
        destinationKey: KEY,
        perUser: { points: 2 ** 31, durationSeconds: 60 },
      }),
    ).toThrow(/at most 1000000000/);
  });

  it('lists every problem of its options in one error, each with its fix', () => {
    let message = '';
    try {
      createStartLimits({
        store: createSqliteStore({ database: db }),
        destinationKey: 'too-short',
        ipv6Subnet: 8,
        perUser: { points: 0, durationSeconds: 60 },
        perIp: { points: 5, durationSeconds: -1 },
        now: 'yesterday' as never,
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/Start limit for perUser needs positive whole `points`/);
    expect(message).toMatch(/Start limit for perIp needs positive whole `points`/);
    expect(message).toMatch(/`destinationKey`: a server-side secret of at least 32 characters/);
    expect(message).toMatch(/`ipv6Subnet` must be a whole number of bits from 16 to 128/);
    expect(message).toMatch(/`now` must be a function returning ms/);
  });
});

describe('budget keys an attacker cannot multiply', () => {
  it('counts an IPv6 client per /64: another address in the same /64 shares the budget, the next /64 does not', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perIp: { points: 2, durationSeconds: 3600 },
    });
    const start = (ip: string, i: number) =>
      outcome(limits.consume(fromIp(ip), { userRef: `u${i}`, destination: `+1555030000${i}` }));
    expect(await start('2001:db8:1:2::1', 1)).toBe('allowed');
    expect(await start('2001:db8:1:2:ffff:ffff:ffff:9', 2)).toBe('allowed');
    expect(await start('2001:db8:1:2:abcd::1', 3)).toMatch(/^rate_limited /);
    expect(await start('2001:db8:1:3::1', 4)).toBe('allowed');
  });

  it('counts each IPv6 address on its own with ipv6Subnet 128', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      ipv6Subnet: 128,
      perIp: { points: 1, durationSeconds: 3600 },
    });
    expect(await outcome(limits.consume(fromIp('2001:db8::1'), { userRef: 'u1', destination: '+15550300001' }))).toBe(
      'allowed',
    );
    expect(await outcome(limits.consume(fromIp('2001:db8::2'), { userRef: 'u2', destination: '+15550300002' }))).toBe(
      'allowed',
    );
  });

  it('a zone id (`%eth0`) after a client address keys no new budget: the address with any zone shares one', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      ipv6Subnet: 128,
      perIp: { points: 1, durationSeconds: 3600 },
    });
    const start = (ip: string, i: number) =>
      outcome(limits.consume(fromIp(ip), { userRef: `u${i}`, destination: `+1555030100${i}` }));
    for (const [first, ...others] of [
      ['203.0.113.9%a', '203.0.113.9%b', '203.0.113.9', '::ffff:203.0.113.9%c', '[::ffff:203.0.113.9%d]:80'],
      ['2001:db8::9%a', '2001:db8::9%b', '2001:db8::9', '[2001:db8::9%c]:443'],
    ]) {
      expect(await start(first!, 0)).toBe('allowed');
      for (const [i, ip] of others.entries()) expect(await start(ip, i + 1), ip).toMatch(/^rate_limited /);
    }
  });

  it('an IPv4 client written as IPv6 (mapped, translated, compatible, NAT64) spends its IPv4 budget, not one shared by all such clients', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perIp: { points: 1, durationSeconds: 3600 },
    });
    const start = (ip: string, i: number) =>
      outcome(limits.consume(fromIp(ip), { userRef: `u${i}`, destination: `+1555030200${i}` }));
    // Two clients, each written the way a translating proxy may: one budget each.
    expect(await start('::ffff:0:203.0.113.9', 0)).toBe('allowed');
    expect(await start('::198.51.100.9', 1)).toBe('allowed');
    // The same clients in another spelling: their budgets are spent.
    expect(await start('203.0.113.9', 2)).toMatch(/^rate_limited /);
    expect(await start('::ffff:c633:6409', 3)).toMatch(/^rate_limited /);
    // Two IPv4 clients behind one NAT64 gateway: one budget each, not the gateway's /64.
    expect(await start('64:ff9b::192.0.2.44', 4)).toBe('allowed');
    expect(await start('64:ff9b::192.0.2.45', 5)).toBe('allowed');
    expect(await start('192.0.2.44', 6)).toMatch(/^rate_limited /);
  });

  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2:0:0:0:0/64'],
    ['2001:DB8:1:2::', '2001:db8:1:2:0:0:0:0/64'],
    ['2001:db8:0:0:1::1', '2001:db8:0:0:0:0:0:0/64'],
    ['fe80::1%eth0', 'fe80:0:0:0:0:0:0:0/64'],
    ['::ffff:203.0.113.7%eth0', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['::FFFF:CB00:7107', '203.0.113.7'],
    ['0:0:0:0:0:ffff:203.0.113.7', '203.0.113.7'],
    ['0000:0000:0000:0000:0000:ffff:cb00:7107', '203.0.113.7'],
    ['[::ffff:c000:201]:443', '192.0.2.1'],
    ['::ffff:c000:201%eth0', '192.0.2.1'],
    ['::ffff:1:2:3', '0:0:0:0:0:0:0:0/64'],
    // IPv4-translated and IPv4-compatible: each its IPv4 client, not one ::/64 for all of them.
    ['::ffff:0:203.0.113.7', '203.0.113.7'],
    ['[::ffff:0:c000:201]:443', '192.0.2.1'],
    ['::203.0.113.7', '203.0.113.7'],
    ['::c000:201', '192.0.2.1'],
    ['0:0:0:0:0:0:198.51.100.7', '198.51.100.7'],
    ['::', '0:0:0:0:0:0:0:0/64'],
    ['::ffff', '0:0:0:0:0:0:0:0/64'],
    ['203.0.113.7%eth0', '203.0.113.7'],
    // NAT64's well-known prefix (64:ff9b::/96): each IPv4 client behind the gateway, not its /64.
    ['64:ff9b::192.0.2.1', '192.0.2.1'],
    ['64:ff9b::c633:6407', '198.51.100.7'],
    ['[64:FF9B:0:0:0:0:cb00:7107]:443', '203.0.113.7'],
    ['64:ff9b:0:0:1::c000:201', '64:ff9b:0:0:0:0:0:0/64'],
    ['64:ff9b:1::c000:201', '64:ff9b:1:0:0:0:0:0/64'],
    // The gateway's prefix itself, as an operator may name it, is no IPv4 client (no 0.0.0.0).
    ['64:ff9b::', '64:ff9b:0:0:0:0:0:0/64'],
    ['64:ff9b::1', '64:ff9b:0:0:0:0:0:0/64'],
    ['::1', '0:0:0:0:0:0:0:0/64'],
    ['unknown', 'unparseable'],
    ['203.0.113.7:5678', '203.0.113.7'],
    ['[2001:db8:1:2::9]:443', '2001:db8:1:2:0:0:0:0/64'],
    ['[::ffff:203.0.113.7]:80', '203.0.113.7'],
    ['[2001:db8::1]', '2001:db8:0:0:0:0:0:0/64'],
    ['203.0.113.7:99999', 'unparseable'],
    ['<script>', 'unparseable'],
    ['1.2.3.4, 5.6.7.8', 'unparseable'],
  ])('the IP key of %s is %s', (ip, key) => {
    expect(ipBudgetKey(ip)).toBe(key);
  });

  it('gives every spelling of one number one destination budget', async () => {
    const spellings = ['+1 555 010 0001', '+1 (555) 010-0001', '+1.555.010.0001', '0015550100001'];
    expect(new Set(spellings.map(normaliseDestination))).toEqual(new Set(['+15550100001']));
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perDestination: { points: 3, durationSeconds: 600 },
    });
    const results = [];
    for (const [i, destination] of spellings.entries()) {
      results.push(await outcome(limits.consume(fromIp(`10.0.4.${i}`), { userRef: `u${i}`, destination })));
    }
    expect(results).toEqual(['allowed', 'allowed', 'allowed', expect.stringMatching(/^rate_limited /)]);
  });

  it('keys destinations by an HMAC under the server-side key, never a plain hash a number list could reverse', async () => {
    const limits = createStartLimits({ store: createSqliteStore({ database: db }), destinationKey: KEY });
    await limits.consume(fromIp('10.0.5.1'), { userRef: 'u1', destination: '+15550100001' });
    // SQL: what lies in the counters table is the point, and the store has no read of it.
    const keys = (db.prepare('SELECT key FROM verify_kit_start_budgets').all() as { key: string }[]).map(
      (row) => row.key,
    );
    const plainHash = createHash('sha256').update('+15550100001').digest('base64url');
    expect(keys.some((key) => key.endsWith(destinationBudgetKey('+15550100001', new TextEncoder().encode(KEY))))).toBe(
      true,
    );
    expect(keys.join(' ')).not.toContain(plainHash);
    expect(keys.join(' ')).not.toContain('5550100001');
    const otherKey = new TextEncoder().encode('another-server-side-key-of-32-characters');
    expect(destinationBudgetKey('+15550100001', otherKey)).not.toBe(
      destinationBudgetKey('+15550100001', new TextEncoder().encode(KEY)),
    );
  });

  it('spends nothing on a refused start: a start refused by the user budget leaves the destination and IP budgets whole', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perUser: { points: 1, durationSeconds: 600 },
      perDestination: { points: 2, durationSeconds: 600 },
      perIp: { points: 2, durationSeconds: 600 },
    });
    const start = (userRef: string) =>
      outcome(limits.consume(fromIp('198.51.100.1'), { userRef, destination: '+15550600001' }));
    expect(await start('u1')).toBe('allowed');
    expect(await start('u1')).toMatch(/^rate_limited /);
    expect(await start('u1')).toMatch(/^rate_limited /);
    // Had the refusals counted, the destination and IP budgets (2 each) would be spent by now.
    expect(await start('u2')).toBe('allowed');
    expect(await start('u3')).toMatch(/^rate_limited /);
  });

  it('gives a refunded start back to the user, destination and IP budgets, while its number stays tried', async () => {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perUser: { points: 1, durationSeconds: 600 },
      perDestination: { points: 1, durationSeconds: 600 },
      perIp: { points: 1, durationSeconds: 600 },
      perUserNumbers: { points: 1, durationSeconds: 600 },
    });
    const from = fromIp('198.51.100.2');
    const receipt = await limits.consume(from, { userRef: 'u1', destination: '+15550600002' });
    await receipt?.refund();
    // Each budget of one start is whole again: the same start is allowed once more, and only once.
    expect(await outcome(limits.consume(from, { userRef: 'u1', destination: '+15550600002' }))).toBe('allowed');
    expect(await outcome(limits.consume(from, { userRef: 'u1', destination: '+15550600002' }))).toMatch(
      /^rate_limited /,
    );
    await (await limits.consume(fromIp('198.51.100.3'), { userRef: 'u2', destination: '+15550600003' }))?.refund();
    // The number u2 tried is still counted among its distinct numbers: another number is refused.
    expect(
      await outcome(limits.consume(fromIp('198.51.100.3'), { userRef: 'u2', destination: '+15550600004' })),
    ).toMatch(/^rate_limited /);
  });
});

describe('forwarded headers while trust proxy is off', () => {
  function appWith(trustProxy: boolean | number, warnings: string[]) {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      logger: { warn: (_obj, msg) => warnings.push(msg ?? '') },
    });
    const app = express();
    app.set('trust proxy', trustProxy);
    app.post('/start', async (req, res) => {
      await limits.consume(req, { userRef: 'u1', destination: '+15550700001' });
      res.send('ok');
    });
    return app;
  }

  it('warns once that every user behind the proxy shares one IP budget', async () => {
    const warnings: string[] = [];
    const app = appWith(false, warnings);
    await request(app).post('/start').set('x-forwarded-for', '203.0.113.9').expect(200);
    await request(app).post('/start').set('x-forwarded-for', '203.0.113.10').expect(200);
    expect(warnings).toEqual([expect.stringMatching(/`trust proxy` is off.*app\.set\('trust proxy'/)]);
  });

  it('says nothing when trust proxy is set, or when no forwarded header arrives', async () => {
    const warnings: string[] = [];
    await request(appWith(1, warnings)).post('/start').set('x-forwarded-for', '203.0.113.9').expect(200);
    await request(appWith(false, warnings)).post('/start').expect(200);
    expect(warnings).toEqual([]);
  });
});

describe('X-Forwarded-For values a proxy writes with a port', () => {
  /** A trusted proxy in front: req.ip is the X-Forwarded-For value as the proxy wrote it. */
  function behindProxy() {
    const limits = createStartLimits({
      store: createSqliteStore({ database: db }),
      destinationKey: KEY,
      perIp: { points: 1, durationSeconds: 3600 },
    });
    const app = express();
    app.set('trust proxy', 1);
    let n = 0;
    app.post('/start', async (req, res) => {
      n++;
      res.send(
        await outcome(limits.consume(req, { userRef: `u${n}`, destination: `+1555080${String(n).padStart(4, '0')}` })),
      );
    });
    return (forwardedFor: string) =>
      request(app)
        .post('/start')
        .set('x-forwarded-for', forwardedFor)
        .then((res) => res.text);
  }

  it('counts ip:port under the address: a new source port gets no fresh budget', async () => {
    const start = behindProxy();
    expect(await start('198.51.100.20:5678')).toBe('allowed');
    expect(await start('198.51.100.20:5679')).toMatch(/^rate_limited /);
    expect(await start('198.51.100.20')).toMatch(/^rate_limited /);
  });

  it('counts [v6]:port under its /64, as the bare address is', async () => {
    const start = behindProxy();
    expect(await start('[2001:db8:5:6::1]:443')).toBe('allowed');
    expect(await start('[2001:db8:5:6::2]:8443')).toMatch(/^rate_limited /);
    expect(await start('2001:db8:5:6::3')).toMatch(/^rate_limited /);
  });

  it('keys every value that does not parse to one shared bucket, never to its raw text', async () => {
    const start = behindProxy();
    expect(await start('garbage-1')).toBe('allowed');
    expect(await start('garbage-2')).toMatch(/^rate_limited /);
    const keys = (db.prepare('SELECT key FROM verify_kit_start_budgets').all() as { key: string }[]).map((r) => r.key);
    expect(keys.join(' ')).not.toContain('garbage');
  });
});
