/**
 * Limits on starting a verification, against SMS pumping (toll fraud): every start sends a text
 * at the integrator's cost. Three budgets, each checked before a session is created: per signed-in
 * user, per destination number and per client IP. Counters live in SQLite by default, so a
 * restart does not reset them; apps with several instances pass limiters on a shared store.
 */
import { createHash } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Request } from 'express';
import { RateLimiterRes, RateLimiterSQLite, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { KitError, KitErrorCode } from './errors.ts';

export interface LimitBudget {
  /** Starts allowed per window. */
  points: number;
  /** Window length in seconds. */
  durationSeconds: number;
}

export interface StartLimitsOptions {
  /** The SQLite database for counters (the kit store's `db`). Not needed when every limiter is passed. */
  database?: Database;
  /** Default 10 starts per hour per user. */
  perUser?: LimitBudget;
  /** Default 5 texts per 10 minutes per destination number (as Twilio Verify caps sends per number). */
  perDestination?: LimitBudget;
  /** Default 30 starts per hour per client IP (`req.ip`: set Express's `trust proxy` behind a proxy). */
  perIp?: LimitBudget;
  /** Limiters on a shared store (rate-limiter-flexible's Redis, Postgres, ...) for several instances. */
  limiters?: { user?: RateLimiterAbstract; destination?: RateLimiterAbstract; ip?: RateLimiterAbstract };
}

export interface StartLimits {
  /** Counts one start; throws KitError `rate_limited` with `retryAfterSeconds` when a budget is spent. */
  consume(req: Request, who: { userRef: string; destination: string }): Promise<void>;
}

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
    if (options.database === undefined) {
      throw new KitError(
        KitErrorCode.InvalidConfig,
        `Start limits need \`database\` (the kit store's db) to keep counters across restarts, or \`limiters.${name}\` on a shared store.`,
      );
    }
    let created!: (error?: unknown) => void;
    // The library creates its table asynchronously; counting before that fails.
    tablesReady.push(new Promise<void>((resolve, reject) => (created = (error) => (error ? reject(error) : resolve()))));
    return new RateLimiterSQLite(
      {
        storeClient: options.database,
        storeType: 'better-sqlite3',
        tableName: 'verify_kit_rate_limits',
        keyPrefix: `start_${name}`,
        points,
        duration: durationSeconds,
      },
      created,
    );
  };
  const byUser = limiterFor('user', options.perUser, DEFAULTS.perUser);
  const byDestination = limiterFor('destination', options.perDestination, DEFAULTS.perDestination);
  const byIp = limiterFor('ip', options.perIp, DEFAULTS.perIp);

  return {
    async consume(req, who) {
      await Promise.all(tablesReady);
      const keys: [RateLimiterAbstract, string][] = [
        [byUser, who.userRef],
        // Counters need no phone numbers in clear.
        [byDestination, createHash('sha256').update(who.destination).digest('base64url')],
        [byIp, req.ip ?? req.socket.remoteAddress ?? 'unknown'],
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
      if (waits.length > 0) {
        const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
        throw new KitError(KitErrorCode.RateLimited, `Too many verification attempts; try again in ${retryAfterSeconds} s.`, {
          retryAfterSeconds,
        });
      }
    },
  };
}

function checkBudget(name: string, budget: LimitBudget): LimitBudget {
  const ok = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n > 0;
  if (!ok(budget.points) || !ok(budget.durationSeconds)) {
    throw new KitError(
      KitErrorCode.InvalidConfig,
      `Start limit for ${name} needs positive whole \`points\` and \`durationSeconds\`, e.g. { points: 5, durationSeconds: 900 }.`,
    );
  }
  return budget;
}
