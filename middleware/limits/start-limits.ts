/**
 * Limits on starting a verification, against SMS pumping (toll fraud): every start sends a text
 * at the integrator's cost. Four budgets, each checked before a session is created: per signed-in
 * user, per destination number (E.164), per client IP, and the distinct numbers one user tried.
 * The store counts all four in one transaction (`consumeStartBudgets`), in its own database
 * (SQLite, or PostgreSQL shared by every instance), so a restart does not reset them and a refused
 * start spends nothing.
 */
import type { Request } from 'express';
import { inKitWords, safeLogger, silentLogger, type KitLogger } from '../logger.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { checkOptionNames, OptionProblems } from '../options/option-problems.ts';
import type { StartBudget, StartBudgetCounter } from '../store/types.ts';
import { DEFAULT_IPV6_SUBNET, destinationBudgetKey, ipBudgetKey } from './limit-keys.ts';
import { countRefusedStart } from '../telemetry.ts';

/** A budget: so many starts per window. */
export interface LimitBudget {
  /** Starts allowed per window. */
  points: number;
  /** Window length in seconds. */
  durationSeconds: number;
}

/** Options of createStartLimits (and of the kit's `limits`). */
export interface StartLimitsOptions {
  /**
   * Counts the budgets: the kit's store (SQLite or PostgreSQL; with PostgreSQL every instance of
   * the app spends the same budgets), or your own `consumeStartBudgets` on a shared database.
   */
  store?: StartBudgetCounter;
  /** Default 10 starts per hour per user. */
  perUser?: LimitBudget;
  /** Default 5 texts per 10 minutes per destination number (as Twilio Verify caps sends per number). */
  perDestination?: LimitBudget;
  /**
   * Default 5 distinct numbers per user per 24 hours: a user texting many numbers (typed ones, to
   * add or change a number) is the pattern of SMS pumping. A number already tried in the window
   * spends nothing more here.
   */
  perUserNumbers?: LimitBudget;
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
  /** Clock in ms for the budgets' windows. Default Date.now; the kit passes its own `now`. */
  now?: () => number;
}

/** A counted start, which the kit gives back when the service refused to create its session. */
export interface StartReceipt {
  /** Gives back what the start spent: the service created no session (busy, or refused the create). */
  refund(): Promise<void>;
  /**
   * Gives back the number's budget only: the app refused the start before any session existed.
   * Starts aimed at someone's number then cannot lock its owner out, while the requester's own
   * user and address budgets stay spent, so the app's refusals cannot be probed without limit.
   */
  refundDestination?(): Promise<void>;
}

/** Start limits the kit consumes before every session create. */
export interface StartLimits {
  /**
   * The prefix length an IPv6 client is counted by (64 when left out): the SMS pumping rules
   * count a client's address by the same prefix, so the two never disagree on who one client is.
   */
  readonly ipv6Subnet?: number;
  /**
   * Counts one start; throws KitError `rate_limited` with `retryAfterSeconds` when a budget is
   * spent. May return a receipt: the kit refunds it when the service created no session (busy, or
   * a 4xx refusal: nothing was sent, so nothing counts against the user).
   */
  // void: limits of the integrator's own that return nothing stay valid.
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
  consume(req: Request, who: { userRef: string; destination: string }): Promise<StartReceipt | void>;
}

/** In the order `consume` passes them to the store. */
const BUDGET_NAMES = ['user', 'destination', 'ip', 'user_numbers'] as const;

const budgetKeyPrefix = (name: (typeof BUDGET_NAMES)[number]) => `start_${name}:`;
const DESTINATION_KEY_PREFIX = budgetKeyPrefix('destination');

const DEFAULTS = {
  perUser: { points: 10, durationSeconds: 60 * 60 },
  perDestination: { points: 5, durationSeconds: 10 * 60 },
  perIp: { points: 30, durationSeconds: 60 * 60 },
  perUserNumbers: { points: 5, durationSeconds: 24 * 60 * 60 },
} satisfies Record<string, LimitBudget>;

/** The start limits (per user, destination and IP), for `limits` when the defaults do not fit. */
/** Every option of createStartLimits: the type says when one is added or renamed. */
export const START_LIMIT_OPTION_NAMES = Object.keys({
  store: true,
  perUser: true,
  perDestination: true,
  perUserNumbers: true,
  perIp: true,
  ipv6Subnet: true,
  destinationKey: true,
  logger: true,
  now: true,
} satisfies Record<keyof StartLimitsOptions, true>);

export function createStartLimits(options: StartLimitsOptions = {}): StartLimits {
  // First: an option of older releases (`database`) is told what replaced it.
  const counter = checkCounter(options);
  // A misspelt budget (`perUserNumber`) would be left at its default without a word.
  const names = new OptionProblems('createStartLimits');
  checkOptionNames(names, options as Record<string, unknown>, START_LIMIT_OPTION_NAMES);
  names.throwIfAny();
  // Every bad value in one error, each with its fix.
  const problems = new OptionProblems('createStartLimits');
  const user = checkBudget(problems, 'perUser', options.perUser ?? DEFAULTS.perUser);
  const destination = checkBudget(problems, 'perDestination', options.perDestination ?? DEFAULTS.perDestination);
  const ip = checkBudget(problems, 'perIp', options.perIp ?? DEFAULTS.perIp);
  const userNumbers = checkBudget(problems, 'perUserNumbers', options.perUserNumbers ?? DEFAULTS.perUserNumbers);
  const destinationKey = checkDestinationKey(problems, options.destinationKey);
  const ipv6Subnet = options.ipv6Subnet ?? DEFAULT_IPV6_SUBNET;
  if (!isIpv6Subnet(ipv6Subnet)) problems.add(IPV6_SUBNET_PROBLEM);
  const now = checkClock(problems, options.now);
  problems.throwIfAny();
  const warnOnce = proxyWarning(options.logger);
  const budget = (name: (typeof BUDGET_NAMES)[number], limit: LimitBudget, key: string, member?: string) => {
    const counted: StartBudget = {
      key: `${budgetKeyPrefix(name)}${key}`,
      points: limit.points,
      durationMs: limit.durationSeconds * 1000,
    };
    if (member !== undefined) counted.member = member;
    return counted;
  };

  return {
    ipv6Subnet,
    async consume(req, who) {
      warnOnce(req);
      const numberKey = destinationBudgetKey(who.destination, destinationKey);
      const budgets = [
        budget('user', user, who.userRef),
        budget('destination', destination, numberKey),
        budget('ip', ip, ipBudgetKey(req.ip ?? req.socket.remoteAddress ?? 'unknown', ipv6Subnet)),
        budget('user_numbers', userNumbers, who.userRef, numberKey),
      ];
      const spentAt = now();
      const refusals = await counter.consumeStartBudgets({ budgets, now: spentAt });
      if (refusals.length === 0) return new CountedStart(counter, budgets, spentAt);
      for (const refusal of refusals) {
        const name = BUDGET_NAMES[refusal.budget];
        if (name !== undefined) countRefusedStart(name);
      }
      const retryAfterSeconds = Math.max(1, Math.ceil(Math.max(...refusals.map((r) => r.retryAfterMs)) / 1000));
      throw inKitWords(
        new KitError(KitErrorCode.RateLimited, `Too many verification attempts; try again in ${retryAfterSeconds} s.`, {
          retryAfterSeconds,
        }),
      );
    },
  };
}

/**
 * The receipt of a counted start (a class: a closure per start would be named at every start when
 * the kit runs through tsx). Neither refund gives back the distinct numbers' budget: a number tried
 * stays tried, since whether this start counted it cannot be told apart afterwards.
 */
class CountedStart implements StartReceipt {
  constructor(
    private readonly counter: StartBudgetCounter,
    private readonly budgets: readonly StartBudget[],
    private readonly spentAt: number,
  ) {}

  refund(): Promise<void> {
    return this.give(this.budgets.filter((b) => b.member === undefined));
  }

  refundDestination(): Promise<void> {
    return this.give(this.budgets.filter((b) => b.key.startsWith(DESTINATION_KEY_PREFIX)));
  }

  private give(budgets: readonly StartBudget[]): Promise<void> {
    return this.counter.refundStartBudgets?.({ budgets, spentAt: this.spentAt }) ?? Promise.resolve();
  }
}

function checkCounter(options: StartLimitsOptions): StartBudgetCounter {
  const { store } = options;
  // Not an option any more: building a SQLite store here would load better-sqlite3 in every app.
  if ('database' in options) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      "Start limits: `database` is not an option; pass `store: createSqliteStore({ database })` from 'hosted-sms-verify-kit/sqlite'.",
    );
  }
  if (store !== undefined) {
    if (typeof store !== 'object' || store === null || typeof store.consumeStartBudgets !== 'function') {
      throw new KitError(
        KitErrorCode.InvalidOptions,
        "Start limits: `store` must count start budgets (`consumeStartBudgets`), e.g. the kit's SQLite or PostgreSQL store.",
      );
    }
    return store;
  }
  throw new KitError(
    KitErrorCode.InvalidOptions,
    "Start limits need `store` (the kit's SQLite or PostgreSQL store, or your own `consumeStartBudgets`) " +
      'to keep counters across restarts.',
  );
}

/**
 * The limits' clock in whole milliseconds: one built on `performance.now()` answers fractions,
 * which the stores' integer columns refuse (every start failed on them).
 */
function checkClock(problems: OptionProblems, now: unknown): () => number {
  if (now === undefined) return Date.now;
  if (typeof now === 'function') return () => Math.floor((now as () => number)());
  problems.add('Start limits: `now` must be a function returning ms, like Date.now.');
  return Date.now;
}

/** Counters are 32-bit integers in the stores; a year is the longest window. */
const MAX_POINTS = 1_000_000_000;
export const MAX_DURATION_SECONDS = 366 * 24 * 60 * 60;

function checkBudget(problems: OptionProblems, name: string, budget: LimitBudget): LimitBudget {
  const ok = (n: unknown, max: number) => typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= max;
  if (
    typeof budget !== 'object' ||
    budget === null ||
    !ok(budget.points, MAX_POINTS) ||
    !ok(budget.durationSeconds, MAX_DURATION_SECONDS)
  ) {
    problems.add(
      `Start limit for ${name} needs positive whole \`points\` (at most ${MAX_POINTS}) and \`durationSeconds\` ` +
        `(at most ${MAX_DURATION_SECONDS}, a year), e.g. { points: 5, durationSeconds: 900 }.`,
    );
  }
  return budget;
}

function checkDestinationKey(problems: OptionProblems, key: string | Uint8Array | undefined): Uint8Array {
  const bytes = typeof key === 'string' ? new TextEncoder().encode(key) : key;
  if (bytes instanceof Uint8Array && bytes.length >= 32) return bytes;
  problems.add(
    'Start limits need `destinationKey`: a server-side secret of at least 32 characters that keys destination counters ' +
      '(e.g. crypto.randomBytes(32) kept in your secrets, the same on every instance).',
  );
  return new Uint8Array();
}

const IPV6_SUBNET_PROBLEM = '`ipv6Subnet` must be a whole number of bits from 16 to 128, e.g. 64.';

function isIpv6Subnet(bits: unknown): bits is number {
  return typeof bits === 'number' && Number.isInteger(bits) && bits >= 16 && bits <= 128;
}

export function checkIpv6Subnet(bits: unknown): number {
  if (!isIpv6Subnet(bits)) throw new KitError(KitErrorCode.InvalidOptions, IPV6_SUBNET_PROBLEM);
  return bits;
}

/**
 * Behind a proxy that Express does not trust, `req.ip` is the proxy's address: every user then
 * shares one IP budget. Says so once, the first time a forwarded header arrives untrusted.
 */
function proxyWarning(given: Pick<KitLogger, 'warn'> | undefined): (req: Request) => void {
  // Through the one guard: a failing logger never disturbs the start.
  const logger =
    given === undefined ? undefined : safeLogger({ ...silentLogger, warn: (obj, msg) => given.warn(obj, msg) });
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
