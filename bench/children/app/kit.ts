/**
 * The kit app: express + express-session + helmet + the kit, on the kit's SQLite store (a file) or
 * its PostgreSQL store, with the bench's one action and generous start limits.
 */
import type { Database } from 'better-sqlite3';
import express, { type Request } from 'express';
import pg from 'pg';
import type * as thisKit from '../../../middleware/index.ts';
import * as postgresEntry from '../../../middleware/store/postgres/postgres.ts';
import * as sqliteEntry from '../../../middleware/store/sqlite/sqlite.ts';
import type { ActionDefinition, VerificationKit, VerifyStore } from '../../../middleware/index.ts';
import {
  ACTION,
  destinationOf,
  ENTERED_ACTION,
  ENTERED_DEFAULT_COUNTRY,
  PG_GRANTS_TABLE,
  PG_INSERT_GRANT,
  PG_SEED_ATTEMPTS,
  seedPostgres,
  SUCCESS_PATH,
  type ConfigureArgs,
  type SeedAttempt,
  usNumberOf,
} from '../../common.ts';
import { config } from '../../config.ts';
import { bag, baseApp, pgCounts, type ConfiguredApp, type Counts } from './shared.ts';

/** As the baseline, which logs nothing: the default logger prints a line per fulfilment in development. */
const QUIET = { info() {}, warn() {}, error() {} };

/** The kit's exports this app uses: this kit's, or another version's (BENCH_BASELINE_KIT_DIR). */
export type KitModule = typeof thisKit;

/** The stores left the package's main entry for `./sqlite` and `./postgres`; an older kit still has them there. */
function storesOf(kitModule: KitModule): typeof sqliteEntry & typeof postgresEntry {
  const old = kitModule as unknown as Partial<typeof sqliteEntry & typeof postgresEntry>;
  return {
    createSqliteStore: old.createSqliteStore ?? sqliteEntry.createSqliteStore,
    createPostgresStore: old.createPostgresStore ?? postgresEntry.createPostgresStore,
  };
}

const GENEROUS = { points: 10_000_000, durationSeconds: 3600 };
/**
 * The typed-number start (BENCH_ONLY=start-entered) and its options, only when that phase runs: another
 * kit version (BENCH_BASELINE_KIT_DIR) without typed numbers still runs every other phase.
 */
const TYPED_NUMBERS = config.phases.includes('start-entered');
/** Each typed-number request types another number: the distinct numbers a user tries are counted, never hit. */
const TYPED_NUMBER_LIMITS = TYPED_NUMBERS ? { perUserNumbers: GENEROUS } : {};

// Trivial: the session's user; the destination is derived from it.
const resolveUser = (req: Request) => {
  const user = bag(req).user;
  return user === undefined ? null : { userRef: user, destination: destinationOf(user) };
};

/**
 * The pumping-cost phase's kit: its `pumping` option, and numbers in a country the counters'
 * history holds, so each start's reading sums that country's month (the bench's +1 555 numbers
 * belong to no country).
 */
function pumpingOf(args: ConfigureArgs) {
  if (args.pumping === undefined) return { resolveUser };
  return {
    pumping: args.pumping,
    resolveUser: (req: Request) => {
      const user = bag(req).user;
      return user === undefined ? null : { userRef: user, destination: usNumberOf(user) };
    },
  };
}

export function configureKit(kitModule: KitModule, args: ConfigureArgs): ConfiguredApp {
  if (args.databaseUrl !== undefined) return configureKitPostgres(kitModule, args);
  const sqlite = storesOf(kitModule).createSqliteStore({ database: args.dbPath });
  const kdb = sqlite.db;
  kdb.exec(
    'CREATE TABLE IF NOT EXISTS bench_grants (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_ref TEXT NOT NULL)',
  );
  const insertGrant = kdb.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
  const grant = (attempt: { sessionId: string; userRef: string }) => {
    insertGrant.run(attempt.sessionId, attempt.userRef);
  };
  const actions: ActionDefinition<Database>[] = [
    {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: SUCCESS_PATH,
      // As the hand-written baseline (and the PostgreSQL bench): no ordering between a user's attempts,
      // whose many seeded attempts would otherwise supersede each other.
      ordering: 'independent',
      fulfil: (_tx, attempt) => grant(attempt),
    },
    ...(TYPED_NUMBERS ? [enteredAction(grant)] : []),
  ];
  const kit = kitModule.createVerificationKit<unknown>({
    baseUrl: args.emulatorUrl,
    clientId: args.clientId,
    clientSecret: args.secret,
    returnUrl: args.returnUrl,
    logger: QUIET,
    store: sqlite,
    actions: actions as ActionDefinition<unknown>[],
    // The kit's start limits are on by default (SQLite counters per user, destination and IP). Every bench
    // request comes from 127.0.0.1, so the budgets are made generous: the limits are counted, never hit.
    // BENCH_KIT_START_LIMITS=off measures the start without them (dangerouslyDisableStartLimits).
    ...(process.env.BENCH_KIT_START_LIMITS === 'off'
      ? { dangerouslyDisableStartLimits: true }
      : { limits: { perUser: GENEROUS, perDestination: GENEROUS, perIp: GENEROUS, ...TYPED_NUMBER_LIMITS } }),
    ...(TYPED_NUMBERS ? { defaultCountry: ENTERED_DEFAULT_COUNTRY } : {}),
    ...pumpingForBench(),
    ...pumpingOf(args),
  });
  const seed = sqliteSeed(kdb, sqlite);
  return { app: kitApp(kit), kit, store: sqlite, db: kdb, seed, counts: sqliteCounts(kdb) };
}

/**
 * The typed-number start's action (BENCH_ONLY=start-entered): the number in the start form's
 * `phone` field is read, checked against the default destination policy and texted; only that
 * number's code proves it.
 */
function enteredAction(grant: (attempt: { sessionId: string; userRef: string }) => void): ActionDefinition<Database> {
  return {
    name: ENTERED_ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    destination: 'entered',
    proves: 'destination',
    // Each request types another number for the same user: every one stands, as on the baseline.
    ordering: 'independent',
    fulfil: (_tx, attempt) => grant(attempt),
  };
}

/**
 * The hand-written baselines count nothing for SMS pumping, so the kit's counters are off here (the
 * same work on both sides); what they add to a start is the pumping-cost phase's to measure.
 * BENCH_KIT_PUMPING=record runs them, as the kit's default does. A kit version from before them
 * (BENCH_BASELINE_KIT_DIR) has no such option.
 */
function pumpingForBench(): { pumping?: { mode: 'record' | 'off' } } {
  if (process.env.BENCH_BASELINE_KIT_DIR !== undefined) return {};
  return { pumping: { mode: process.env.BENCH_KIT_PUMPING === 'record' ? 'record' : 'off' } };
}

/** Seeds attempts through the kit's store in one transaction, due in 3 minutes. */
function sqliteSeed(kdb: Database, s: VerifyStore<unknown>) {
  return (attempts: SeedAttempt[]) => {
    const now = Date.now();
    kdb.exec('BEGIN');
    try {
      for (const a of attempts) {
        // insertAttempt runs its statement synchronously; awaiting is not needed inside BEGIN/COMMIT.
        void s.insertAttempt({
          state: a.state,
          sessionId: a.sessionId,
          userRef: a.userRef,
          action: ACTION,
          params: null,
          destination: destinationOf(a.userRef),
          returnTo: SUCCESS_PATH,
          sensitivity: 'normal',
          platform: 'web',
          createdAt: now,
          nextCheckAt: now + 3 * 60_000,
        });
      }
      kdb.exec('COMMIT');
    } catch (error) {
      kdb.exec('ROLLBACK');
      throw error;
    }
  };
}

function sqliteCounts(kdb: Database): () => Counts {
  const grants = kdb.prepare('SELECT COUNT(*) AS n FROM bench_grants');
  const fulfilled = kdb.prepare("SELECT COUNT(*) AS n FROM verify_kit_attempts WHERE outcome = 'fulfilled'");
  return () => ({ grants: (grants.get() as { n: number }).n, fulfilled: (fulfilled.get() as { n: number }).n });
}

function kitApp(k: VerificationKit<unknown>): express.Express {
  const app = baseApp();
  app.post('/bench/login', express.urlencoded({ extended: false }), (req, res) => {
    bag(req).user = String((req.body as { user?: string }).user);
    res.json({ csrf: k.csrfToken(req) });
  });
  app.use(k.router);
  return app;
}

/** The kit on its PostgreSQL store: the same action, awaited on the transaction's client. */
function configureKitPostgres(kitModule: KitModule, args: ConfigureArgs): ConfiguredApp {
  const pool = new pg.Pool({ connectionString: args.databaseUrl, max: 10 });
  const pgStore = storesOf(kitModule).createPostgresStore({ pool });
  const action: ActionDefinition<pg.PoolClient> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    // One lander lands thousands of its own verified attempts, several at once; the hand-written
    // baseline applies each one, so the kit does too (with 'latest' a newer one would supersede them).
    ordering: 'independent',
    async fulfil(tx, attempt) {
      await tx.query({ name: 'bench_grant', text: PG_INSERT_GRANT, values: [attempt.sessionId, attempt.userRef] });
    },
  };
  const kit = kitModule.createVerificationKit<unknown>({
    baseUrl: args.emulatorUrl,
    clientId: args.clientId,
    clientSecret: args.secret,
    returnUrl: args.returnUrl,
    logger: QUIET,
    store: pgStore as VerifyStore<unknown>,
    actions: [action as ActionDefinition<unknown>],
    limits: { perUser: GENEROUS, perDestination: GENEROUS, perIp: GENEROUS },
    ...pumpingForBench(),
    ...pumpingOf(args),
  });
  const ready = pgStore.ready.then(() => pool.query(PG_GRANTS_TABLE));
  const seed = async (attempts: SeedAttempt[]) => {
    await ready;
    const now = Date.now();
    await seedPostgres(pool, PG_SEED_ATTEMPTS, attempts, [ACTION, SUCCESS_PATH, now, now + 3 * 60_000]);
  };
  return {
    app: kitApp(kit),
    kit,
    store: pgStore as VerifyStore<unknown>,
    pgPool: pool,
    seed,
    counts: pgCounts(pool, 'verify_kit_attempts'),
  };
}
