/**
 * Limits on starting a verification, against SMS pumping (toll fraud): every start sends a text
 * at the integrator's cost. Three budgets, each checked before a session is created: per signed-in
 * user, per destination number and per client IP. Counters live in the kit store's database by
 * default (SQLite, or PostgreSQL shared by every instance), so a restart does not reset them.
 */
import type { Database } from 'better-sqlite3';
import type { Request } from 'express';
import {
  RateLimiterPostgres,
  RateLimiterRes,
  RateLimiterSQLite,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { KitLogger } from './logger.ts';
import { KitError, KitErrorCode } from './errors.ts';
import type { PostgresStore } from './store/postgres.ts';
import { DEFAULT_IPV6_SUBNET, destinationBudgetKey, ipBudgetKey } from './limit-keys.ts';
import { countRefusedStart } from './telemetry.ts';

export interface LimitBudget {
  /** Starts allowed per window. */
  points: number;
  /** Window length in seconds. */
  durationSeconds: number;
}

export interface StartLimitsOptions {
  /** The SQLite database for counters (the kit store's `db`). Not needed when every limiter is passed. */
  database?: Database;
  /**
   * The kit's PostgreSQL store: counters in its database (the table its migrations create), so
   * every instance of the app spends the same budgets.
   */
  postgres?: PostgresStore;
  /** Default 10 starts per hour per user. */
  perUser?: LimitBudget;
  /** Default 5 texts per 10 minutes per destination number (as Twilio Verify caps sends per number). */
  perDestination?: LimitBudget;
  /** Default 30 starts per hour per client IP (`req.ip`: set Express's `trust proxy` behind a proxy). */
  perIp?: LimitBudget;
  /** IPv6 clients share one IP budget per prefix of this length. Default 64; 128 counts each address. */
  ipv6Subnet?: number;
  /**
   * Server-side key (at least 32 characters or bytes) for the HMAC that keys destination counters,
   * so they hold no phone number. The kit derives one from the client secret when you pass none.
   */
  destinationKey?: string | Uint8Array;
  /** Receives the one-time warning about forwarded headers while `trust proxy` is off. */
  logger?: Pick<KitLogger, 'warn'>;
  /** Limiters on a shared store (rate-limiter-flexible's Redis, Postgres, ...) for several instances. */
  limiters?: { user?: RateLimiterAbstract; destination?: RateLimiterAbstract; ip?: RateLimiterAbstract };
}

export interface StartLimits {
  /** Counts one start; throws KitError `rate_limited` with `retryAfterSeconds` when a budget is spent. */
  consume(req: Request, who: { userRef: string; destination: string }): Promise<void>;
}

/** In the order `consume` checks them. */
const BUDGET_NAMES = ['user', 'destination', 'ip'] as const;

const DEFAULTS = {
  perUser: { points: 10, durationSeconds: 60 * 60 },
  perDestination: { points: 5, durationSeconds: 10 * 60 },
  perIp: { points: 30, durationSeconds: 60 * 60 },
} satisfies Record<string, LimitBudget>;

export function createStartLimits(options: StartLimitsOptions = {}): StartLimits {
  const tablesReady: Promise<void>[] = [];
  const limiterFor = (name: 'user' | 'destination' | 'ip', budget: LimitBudget | undefined, fallback: LimitBudget) => {
    const given = options.limiters?.[name];
    if (given) return given;
    const { points, durationSeconds } = checkBudget(name, budget ?? fallback);
    const common = {
      tableName: 'verify_kit_rate_limits',
      keyPrefix: `start_${name}`,
      points,
      duration: durationSeconds,
    };
    if (options.postgres !== undefined) {
      // The store's migrations create the table (under their lock); counting waits for them.
      tablesReady.push(options.postgres.ready);
      const shared = { storeClient: options.postgres.pool, storeType: 'pool', tableCreated: true };
      return new RateLimiterPostgres({ ...common, ...shared });
    }
    if (options.database === undefined) {
      throw new KitError(
        KitErrorCode.InvalidOptions,
        "Start limits need `database` (the kit store's db) or `postgres` (the kit's PostgreSQL store) to keep " +
          `counters across restarts, or \`limiters.${name}\` on a shared store.`,
      );
    }
    let created!: (error?: unknown) => void;
    // The library creates its table asynchronously; counting before that fails.
    tablesReady.push(
      new Promise<void>((resolve, reject) => (created = (error) => (error ? reject(error) : resolve()))),
    );
    return new RateLimiterSQLite(
      {
        ...common,
        storeClient: options.database,
        storeType: 'better-sqlite3',
        // Expired counters are deleted (every 5 minutes, those expired over an hour ago); the
        // library leaves this off for SQLite, and the table would grow forever.
        clearExpiredByTimeout: true,
      },
      created,
    );
  };
  const destinationKey = checkDestinationKey(options.destinationKey);
  const ipv6Subnet = checkIpv6Subnet(options.ipv6Subnet ?? DEFAULT_IPV6_SUBNET);
  const byUser = limiterFor('user', options.perUser, DEFAULTS.perUser);
  const byDestination = limiterFor('destination', options.perDestination, DEFAULTS.perDestination);
  const byIp = limiterFor('ip', options.perIp, DEFAULTS.perIp);
  const warnOnce = proxyWarning(options.logger);

  return {
    async consume(req, who) {
      await Promise.all(tablesReady);
      warnOnce(req);
      const keys: [RateLimiterAbstract, string][] = [
        [byUser, who.userRef],
        [byDestination, destinationBudgetKey(who.destination, destinationKey)],
        [byIp, ipBudgetKey(req.ip ?? req.socket.remoteAddress ?? 'unknown', ipv6Subnet)],
      ];
      const refusals = await Promise.all(
        keys.map(([limiter, key]) =>
          limiter.consume(key).then(
            () => undefined,
            (refusal: unknown) => {
              if (refusal instanceof RateLimiterRes) return refusal;
              throw refusal; // a store failure, not a refusal
            },
          ),
        ),
      );
      const waits = refusals.filter((r) => r !== undefined).map((r) => r.msBeforeNext);
      refusals.forEach((refusal, index) => {
        if (refusal !== undefined) countRefusedStart(BUDGET_NAMES[index]!);
      });
      if (waits.length > 0) {
        // A refused start sends nothing, so it spends nothing: give back what this call counted.
        await Promise.all(keys.map(([limiter, key]) => limiter.reward(key, 1)));
        const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
        throw new KitError(
          KitErrorCode.RateLimited,
          `Too many verification attempts; try again in ${retryAfterSeconds} s.`,
          {
            retryAfterSeconds,
          },
        );
      }
    },
  };
}

function checkBudget(name: string, budget: LimitBudget): LimitBudget {
  const ok = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n > 0;
  if (!ok(budget.points) || !ok(budget.durationSeconds)) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `Start limit for ${name} needs positive whole \`points\` and \`durationSeconds\`, e.g. { points: 5, durationSeconds: 900 }.`,
    );
  }
  return budget;
}

function checkDestinationKey(key: string | Uint8Array | undefined): Uint8Array {
  const bytes = typeof key === 'string' ? new TextEncoder().encode(key) : key;
  if (!(bytes instanceof Uint8Array) || bytes.length < 32) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'Start limits need `destinationKey`: a server-side secret of at least 32 characters that keys destination counters ' +
        '(e.g. crypto.randomBytes(32) kept in your secrets, the same on every instance).',
    );
  }
  return bytes;
}

function checkIpv6Subnet(bits: number): number {
  if (!Number.isInteger(bits) || bits < 16 || bits > 128) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      '`ipv6Subnet` must be a whole number of bits from 16 to 128, e.g. 64.',
    );
  }
  return bits;
}

/**
 * Behind a proxy that Express does not trust, `req.ip` is the proxy's address: every user then
 * shares one IP budget. Says so once, the first time a forwarded header arrives untrusted.
 */
function proxyWarning(logger: Pick<KitLogger, 'warn'> | undefined): (req: Request) => void {
  let warned = false;
  return (req) => {
    if (warned || logger === undefined) return;
    const forwarded = req.headers?.['x-forwarded-for'] ?? req.headers?.forwarded;
    if (forwarded === undefined) return;
    const trusts = req.app?.get('trust proxy fn') as ((address: string, hop: number) => boolean) | undefined;
    const peer = req.socket?.remoteAddress;
    if (trusts === undefined || peer === undefined || trusts(peer, 0)) return;
    warned = true;
    logger.warn(
      { peer },
      "verify kit: a request carries X-Forwarded-For/Forwarded but Express's `trust proxy` is off, so every user " +
        "behind the proxy shares one IP start budget; set app.set('trust proxy', <your proxy hops>)",
    );
  };
}
