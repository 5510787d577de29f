import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Request } from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStartLimits } from '../../middleware/rate-limit.ts';

let dir: string;
let db: BetterSqlite3.Database;
const fromIp = (ip: string) => ({ ip }) as Request;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-limits-'));
  db = new BetterSqlite3(join(dir, 'app.sqlite'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function outcome(promise: Promise<void>) {
  return promise.then(
    () => 'allowed',
    (error: { code: string; retryAfterSeconds: number }) => `${error.code} ${error.retryAfterSeconds}`,
  );
}

describe('start limits against SMS pumping', () => {
  it('stops a user after their budget and says when to retry', async () => {
    const limits = createStartLimits({ database: db, perUser: { points: 2, durationSeconds: 600 } });
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await outcome(limits.consume(fromIp(`10.0.0.${i}`), { userRef: 'u1', destination: `+1555010000${i}` })));
    expect(results).toEqual(['allowed', 'allowed', 'rate_limited 600']);
    expect(await outcome(limits.consume(fromIp('10.0.0.9'), { userRef: 'u2', destination: '+15550100009' }))).toBe('allowed');
  });

  it('stops texts to one destination whoever asks, and keeps no phone number in clear', async () => {
    const limits = createStartLimits({ database: db, perDestination: { points: 3, durationSeconds: 3600 } });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await outcome(limits.consume(fromIp(`10.0.1.${i}`), { userRef: `u${i}`, destination: '+15550199999' })));
    expect(results.at(-1)).toMatch(/^rate_limited /);
    expect(results.slice(0, 3)).toEqual(['allowed', 'allowed', 'allowed']);
    const keys = db.prepare('SELECT key FROM verify_kit_rate_limits').all() as { key: string }[];
    expect(keys.map((k) => k.key).join(' ')).not.toContain('5550199999');
  });

  it('stops one client IP across users and destinations', async () => {
    const limits = createStartLimits({ database: db, perIp: { points: 3, durationSeconds: 3600 } });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await outcome(limits.consume(fromIp('203.0.113.7'), { userRef: `u${i}`, destination: `+1555020000${i}` })));
    expect(results).toEqual(['allowed', 'allowed', 'allowed', expect.stringMatching(/^rate_limited /)]);
  });

  it('keeps counting across a restart, because the counters live in the database file', async () => {
    const before = createStartLimits({ database: db, perUser: { points: 1, durationSeconds: 600 } });
    expect(await outcome(before.consume(fromIp('10.0.0.1'), { userRef: 'u1', destination: '+15550100001' }))).toBe('allowed');
    db.close();
    db = new BetterSqlite3(join(dir, 'app.sqlite'));
    const after = createStartLimits({ database: db, perUser: { points: 1, durationSeconds: 600 } });
    expect(await outcome(after.consume(fromIp('10.0.0.1'), { userRef: 'u1', destination: '+15550100002' }))).toMatch(/^rate_limited /);
  });

  it('refuses options it cannot use, saying how to fix them', () => {
    expect(() => createStartLimits({})).toThrow(/need `database`/);
    expect(() => createStartLimits({ database: db, perIp: { points: 0, durationSeconds: 60 } })).toThrow(/positive whole `points`/);
  });
});
