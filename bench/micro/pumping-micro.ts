/**
 * Diagnostic (not part of npm run bench): what the SMS pumping rules add to a start's store work,
 * on a store holding a month of counters. Without the rules a start's store work is its budgets
 * (`consumeStartBudgets`) and its attempt (`insertAttempt`); with them, the check before the text,
 * which reads, decides and counts it in one atomic step (`reserveSend`: five keys, with the limits
 * the default rules know before the reading, and each country's counts kept from its last reading
 * as the guard keeps them; on PostgreSQL one statement below those limits, else a reading and a
 * conditional count), and the send's record
 * once its session exists (`attachSend`) come on top, as the start's check makes them. Each
 * variant runs on SQLite and on PostgreSQL (TEST_POSTGRES_URL), one start at a time, in
 * alternating rounds; p50 and p99 in ms, and their ratios. A whole start also waits on the
 * service's createSession, which this leaves out: the ratios here bound the start's from above.
 *
 *   npx tsx bench/micro/pumping-micro.ts    (PUMPING_MICRO_ONLY=sqlite or postgres: one store)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { sureLimitsFor } from '../../middleware/pumping/pumping-decision.ts';
import { EarlierCountryCounts } from '../../middleware/pumping/pumping-earlier-counts.ts';
import { DEFAULT_THRESHOLDS, hourOf } from '../../middleware/pumping/pumping-rules.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { random } from '../phases/pumping-model.ts';
import { createTestDatabase } from '../postgres.ts';

const MONTH_SENDS = 60_000;
const ROUNDS = 10;
const PER_ROUND = 200;
const PREFIXES = ['+1202', '+447400', '+9198', '+49151', '+336', '+55119', '+346', '+393', '+234803', '+92300'];
const NOW = Date.UTC(2026, 1, 4, 12);

const rand = random(7);
const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('');
const aStart = () => ({
  number: `${PREFIXES[Math.floor(rand() * PREFIXES.length)]}${digits(7)}`,
  ip: `10.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`,
  user: `u${Math.floor(rand() * 1e9)}`,
});

/** A month of counters: 60,000 texts spread over 30 days, four in five verified. */
async function seedMonth(store: VerifyStore<unknown>): Promise<void> {
  for (let n = 0; n < MONTH_SENDS; n++) {
    const { number, ip, user } = aStart();
    const keys = startKeys(number, ip, user).keys;
    const hour = hourOf(NOW) - Math.floor(rand() * 30 * 24);
    await store.pumping!.recordSend({ sessionId: `seed-${n}`, keys, hour });
    if (rand() < 0.8) await store.pumping!.markVerified(`seed-${n}`);
  }
}

const earlier = new EarlierCountryCounts();

async function oneStart(store: VerifyStore<unknown>, rules: boolean): Promise<number> {
  const { number, ip, user } = aStart();
  const began = performance.now();
  const keys = startKeys(number, ip, user);
  if (rules) {
    const hour = hourOf(NOW);
    const sure = sureLimitsFor(keys, DEFAULT_THRESHOLDS, earlier.get(keys.country, hour), NOW);
    const query = { keys: keys.keys, address: keys.address, hour, now: NOW, sure };
    await store.pumping!.reserveSend(query, (reading) => {
      earlier.keep(keys.country, hour, reading.counts[0]);
      return { count: 'text' };
    });
  }
  await store.consumeStartBudgets!({
    budgets: [
      { key: `start_user:${user}`, points: 10, durationMs: 3_600_000 },
      { key: `start_destination:${number}`, points: 5, durationMs: 600_000 },
      { key: `start_ip:${ip}`, points: 30, durationMs: 3_600_000 },
    ],
    now: NOW,
  });
  const sessionId = `ses_${randomBytes(12).toString('hex')}`;
  await store.insertAttempt({
    state: randomBytes(32).toString('base64url'),
    sessionId,
    userRef: user,
    action: 'confirm_phone',
    params: {},
    destination: number,
    returnTo: '/',
    sensitivity: 'normal',
    platform: 'web',
    createdAt: NOW,
    nextCheckAt: NOW + 180_000,
  });
  if (rules) await store.pumping!.attachSend({ sessionId, keys: keys.keys, hour: hourOf(NOW) });
  return performance.now() - began;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function measure(name: string, store: VerifyStore<unknown>): Promise<void> {
  await seedMonth(store);
  const samples: Record<'off' | 'on', number[]> = { off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      for (let n = 0; n < PER_ROUND; n++) samples[variant].push(await oneStart(store, variant === 'on'));
    }
  }
  const off = samples.off.sort((a, b) => a - b);
  const on = samples.on.sort((a, b) => a - b);
  const line = (p: number) =>
    `p${p * 100} ${pct(off, p).toFixed(3)} -> ${pct(on, p).toFixed(3)} ms (x${(pct(on, p) / pct(off, p)).toFixed(2)})`;
  process.stdout.write(`${name}: rules off -> on, ${off.length} starts each: ${line(0.5)}, ${line(0.99)}\n`);
}

async function main(): Promise<void> {
  process.stdout.write(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'pumping-micro-'));
  const sqlite = createSqliteStore({ database: join(dir, 'kit.sqlite') });
  try {
    if (process.env.PUMPING_MICRO_ONLY !== 'postgres') await measure('SQLite', sqlite);
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.env.PUMPING_MICRO_ONLY === 'sqlite') return;
  const database = await createTestDatabase();
  const postgres = createPostgresStore({ pool: database.pool });
  try {
    await postgres.ready;
    await measure('PostgreSQL', postgres);
  } finally {
    await postgres.close();
    await database.drop();
  }
  process.stdout.write(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
