/**
 * What the SMS pumping rules cost a start (BENCH_ONLY=pumping-cost): the same kit app twice, each
 * in its own process, with `pumping: { mode: 'refuse' }` (thresholds out of the way of the bench's
 * own traffic, which comes from one address and is never verified: every rule is read and judged,
 * none trips) against `pumping: { mode: 'off' }`, on SQLite and then on PostgreSQL. Both databases
 * hold the same month of counters (pumping-history.ts) and each user's number is in a country that
 * history holds, so a start's reading sums a busy country's fortnight. POST /verify/start as the
 * start phase, in alternating rounds (ABBA); in the comparison "kit" is the rules on, "baseline"
 * the rules off.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { PumpingOptions } from '../../middleware/index.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { ACTION, type ConfigureArgs } from '../common.ts';
import { config } from '../config.ts';
import { spawnChild, type Child } from '../ipc.ts';
import type { LoadRequest } from '../load.ts';
import { log } from '../measure.ts';
import { createTestDatabase, type TestDatabase } from '../postgres.ts';
import type { SeedClient } from '../seed.ts';
import { interleaved, type Comparison } from './interleaved.ts';
import {
  COUNT_NEW_SENDS,
  fillPostgres,
  fillSqlite,
  monthOfHistory,
  purgeAsTheKitWould,
  type PumpingHistory,
} from './pumping-history.ts';
import { login, spawnApp, type Side } from './sides.ts';

/** Thresholds no bench traffic reaches: the rules run in full and never refuse. */
const OUT_OF_THE_WAY = { dailyFloor: 1e9, hourlyFloor: 1e9, unverifiedPerVerified: 0.5 };
const RULES_ON: Pick<PumpingOptions, 'mode' | 'thresholds'> = {
  mode: 'refuse',
  thresholds: { country: OUT_OF_THE_WAY, block: OUT_OF_THE_WAY, address: OUT_OF_THE_WAY, addressCountries: 1e9 },
};
const RULES_OFF: Pick<PumpingOptions, 'mode'> = { mode: 'off' };
/** The start phase never lands: no browser returns to this address. */
const RETURN_URL = 'http://localhost:9/verify/return';

export type PumpingCostStore = 'sqlite' | 'postgres';

export interface PumpingCostRun {
  store: PumpingCostStore;
  /** kit = rules on, baseline = rules off. */
  comparison: Comparison;
  /** Texts each app's counters gained during the run: every start with the rules on, none with them off. */
  counted: { on: number; off: number };
  /** Starts each app answered 200 (sanity checks, warm-up and rounds). */
  started: { on: number; off: number };
}

export interface PumpingCostFigures {
  history: { sends: number; verified: number; countRows: number };
  runs: PumpingCostRun[];
}

/** Where one store's pair keeps its counters, and how the orchestrator counts the texts in them. */
interface StorePair {
  args: (clients: [SeedClient, SeedClient], emulatorUrl: string) => [ConfigureArgs, ConfigureArgs];
  sends: () => Promise<[number, number]>;
  close: () => Promise<void>;
}

async function sqlitePair(dir: string, history: PumpingHistory, now: number): Promise<StorePair> {
  const paths = [join(dir, 'pumping-on.sqlite'), join(dir, 'pumping-off.sqlite')] as const;
  for (const path of paths) {
    const store = createSqliteStore({ database: path });
    fillSqlite(store.db, history);
    await purgeAsTheKitWould(store.pumping, now);
    store.db.exec('ANALYZE');
    await store.close();
  }
  const count = (path: string) => {
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      return (db.prepare(COUNT_NEW_SENDS).get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  return {
    args: ([on, off], emulatorUrl) => [
      { ...base(on, emulatorUrl), dbPath: paths[0], pumping: RULES_ON },
      { ...base(off, emulatorUrl), dbPath: paths[1], pumping: RULES_OFF },
    ],
    sends: async () => [count(paths[0]), count(paths[1])],
    close: async () => {},
  };
}

async function postgresPair(history: PumpingHistory, now: number): Promise<StorePair> {
  const databases: TestDatabase[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const database = await createTestDatabase({ max: 2 });
      databases.push(database);
      const store = createPostgresStore({ pool: database.pool });
      await store.ready;
      await fillPostgres(database.pool, history);
      await purgeAsTheKitWould(store.pumping, now);
      await database.pool.query('ANALYZE');
    }
  } catch (error) {
    await Promise.all(databases.map((d) => d.drop()));
    throw error;
  }
  const [on, off] = databases as [TestDatabase, TestDatabase];
  const count = async (d: TestDatabase) => Number((await d.pool.query<{ n: string }>(COUNT_NEW_SENDS)).rows[0]!.n);
  return {
    args: ([onClient, offClient], emulatorUrl) => [
      { ...base(onClient, emulatorUrl), dbPath: '', databaseUrl: on.url, pumping: RULES_ON },
      { ...base(offClient, emulatorUrl), dbPath: '', databaseUrl: off.url, pumping: RULES_OFF },
    ],
    sends: async () => [await count(on), await count(off)],
    close: async () => {
      await on.drop();
      await off.drop();
    },
  };
}

const base = (client: SeedClient, emulatorUrl: string) => ({
  emulatorUrl,
  clientId: client.clientId,
  secret: client.secret,
  returnUrl: client.returnUrl,
});

/** One signed-in user per worker and side, each start with the user's CSRF token. */
async function startRequests(sides: [Side, Side]): Promise<(side: Side, worker: number) => LoadRequest> {
  const jars = new Map<string, { cookie: string; csrf: string }[]>();
  for (const side of sides) {
    const list = [];
    for (let w = 0; w < config.concurrency; w++) list.push(await login(side, `bench-pumping-${side.name}-${w}`));
    jars.set(side.name, list);
  }
  return (side, worker) => {
    const jar = jars.get(side.name)![worker]!;
    return {
      method: 'POST',
      path: '/verify/start',
      headers: { cookie: jar.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `action=${ACTION}&_csrf=${encodeURIComponent(jar.csrf)}`,
    };
  };
}

/** Each side answers a start with the page that posts the handoff to the service. */
async function sanityCheck(side: Side, emulatorUrl: string, request: LoadRequest): Promise<void> {
  const response = await fetch(`${side.origin}${request.path}`, {
    method: 'POST',
    headers: request.headers,
    body: request.body ?? null,
    redirect: 'manual',
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes(`${emulatorUrl}/verify`) || !text.includes('name="hx"'))
    throw new Error(
      `pumping-cost sanity check failed (rules ${side.name === 'kit' ? 'on' : 'off'}): ${response.status}`,
    );
}

/** One store: both apps on their own copy of the month, measured in alternating rounds, then stopped. */
async function runOnStore(
  store: PumpingCostStore,
  pair: StorePair,
  clients: [SeedClient, SeedClient],
  emulator: { url: string; child: Child },
  children: Child[],
): Promise<PumpingCostRun> {
  const [on, off] = await Promise.all([spawnApp('kit', children), spawnApp('kit', children)]);
  try {
    const [onArgs, offArgs] = pair.args(clients, emulator.url);
    await on.child.call('configure', onArgs);
    await off.child.call('configure', offArgs);
    const sides: [Side, Side] = [
      { name: 'kit', child: on.child, origin: `http://127.0.0.1:${on.port}`, client: clients[0] },
      { name: 'baseline', child: off.child, origin: `http://127.0.0.1:${off.port}`, client: clients[1] },
    ];
    const request = await startRequests(sides);
    const before = await pair.sends();
    for (const side of sides) await sanityCheck(side, emulator.url, request(side, 0));
    const comparison = await interleaved(`pumping-cost ${store}`, sides, emulator.child, 200, (side, _i, worker) =>
      request(side, worker),
    );
    // The rules-on app counts its texts after answering: give the last ones a moment to be written.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await pair.sends();
    const sanity = 1 + config.warmupRequests;
    return {
      store,
      comparison,
      counted: { on: after[0] - before[0], off: after[1] - before[1] },
      started: { on: sanity + comparison.kit.ok, off: sanity + comparison.baseline.ok },
    };
  } finally {
    await on.child.stop();
    await off.child.stop();
    await pair.close();
  }
}

/** Measures SQLite then PostgreSQL, on an emulator of its own; every process it starts is added to `children`. */
export async function pumpingCostPhase(dir: string, children: Child[]): Promise<PumpingCostFigures> {
  const secret = () => `bench-${randomBytes(24).toString('base64url')}`;
  const client = (clientId: string): SeedClient => ({ clientId, secret: secret(), returnUrl: RETURN_URL });
  const clients = {
    sqlite: [client('bench-pumping-on'), client('bench-pumping-off')] as [SeedClient, SeedClient],
    postgres: [client('bench-pg-pumping-on'), client('bench-pg-pumping-off')] as [SeedClient, SeedClient],
  };
  const child = spawnChild('./children/emulator-child.ts', 'emulator');
  children.push(child);
  try {
    const all = [...clients.sqlite, ...clients.postgres];
    const { url } = await child.call<{ url: string }>('start', { clients: all }, 60_000);
    const now = Date.now();
    const history = monthOfHistory(now);
    log(
      `pumping-cost: a month of counters in each database (${history.sends.length} texts, ${history.verified} verified, ` +
        `${history.counts.length} hourly counts; then purged as the kit keeps them, 15 days), the rules on ` +
        `(refuse, thresholds out of reach) vs off`,
    );
    const runs: PumpingCostRun[] = [];
    const emulator = { url, child };
    runs.push(await runOnStore('sqlite', await sqlitePair(dir, history, now), clients.sqlite, emulator, children));
    runs.push(await runOnStore('postgres', await postgresPair(history, now), clients.postgres, emulator, children));
    return {
      history: { sends: history.sends.length, verified: history.verified, countRows: history.counts.length },
      runs,
    };
  } finally {
    await child.stop();
  }
}

/** The title of one store's table (the report prints it over the comparison). */
export function pumpingCostTitle(p: PumpingCostFigures, run: PumpingCostRun): string {
  return (
    `SMS pumping rules' cost to a start on ${run.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: POST /verify/start, ` +
    `the same kit with pumping { mode: 'refuse' } (thresholds out of the bench's reach) as "kit" and { mode: 'off' } as ` +
    `"baseline", each database holding the counters of a month (${p.history.sends} texts, ${p.history.verified} verified, ` +
    `${p.history.countRows} hourly counts over 20 countries, then purged as the kit keeps them: 15 days); concurrency ` +
    `${config.concurrency}, ${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved`
  );
}

export function pumpingCountedLine(run: PumpingCostRun): string {
  return (
    `  texts counted by the rules: ${run.counted.on} of ${run.started.on} starts with them on, ` +
    `${run.counted.off} of ${run.started.off} with them off`
  );
}
