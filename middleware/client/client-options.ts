/** The client's options: where the service is, the credentials, timeouts and retries. */
import { rememberSecret } from '../errors.ts';
import { checkKnownKeys, isRecord, OptionProblems } from '../options/option-problems.ts';
import { checkBaseUrl, checkCredentials } from '../options/service-access.ts';

/** Timeouts of every call to the service: whole milliseconds from 1 to 2147483647 (others are refused). */
export interface VerifyClientTimeouts {
  /** TCP + TLS connect. Default 5000 ms. */
  connectMs?: number;
  /** Until the response headers arrive. Default 10000 ms. */
  headersMs?: number;
  /** For the whole body, from the headers' arrival (a body sent a byte at a time is cut off too). Default 10000 ms. */
  bodyMs?: number;
}

/** Retries of a session create (same Idempotency-Key each time). */
export interface VerifyClientRetry {
  /**
   * Tries of one createSession, the first included. Default 5. A 409 `idempotency_request_in_flight`
   * (the first try still running at the service) uses none: it is waited out within `budgetMs`.
   */
  maxAttempts?: number;
  /** First backoff; doubles each retry, with full jitter. Default 200 ms. */
  baseDelayMs?: number;
  /** Cap of one backoff. Default 3000 ms. */
  maxDelayMs?: number;
  /** No retry starts after this much time since the first try (well inside the 120 s handoff). Default 20000 ms. */
  budgetMs?: number;
  /**
   * After a 429 (the service limits this client), a retry waits at least its Retry-After and none
   * starts later than this since the first try: a user is waiting on the start. Default 5000 ms;
   * 0 never retries a 429. Beyond it the start shows "busy, try again shortly".
   */
  busyBudgetMs?: number;
}

/** The longest a timer waits: a longer one (or 0, or NaN) would fire at once, failing every call. */
const MAX_TIMER_MS = 2_147_483_647;

/** Each setting's whole-number range (a delay or budget in ms; 0 never retries a 429). */
const RANGES = {
  timeouts: { connectMs: [1, MAX_TIMER_MS], headersMs: [1, MAX_TIMER_MS], bodyMs: [1, MAX_TIMER_MS] },
  retry: {
    maxAttempts: [1, 1000],
    baseDelayMs: [0, MAX_TIMER_MS],
    maxDelayMs: [0, MAX_TIMER_MS],
    budgetMs: [0, MAX_TIMER_MS],
    busyBudgetMs: [0, MAX_TIMER_MS],
  },
} as const;

/** Tries of one status read: as many as a create's (`retry.maxAttempts`). */
const STATUS_READ_ATTEMPTS = [1, 1000] as const;

/** A setting outside its whole-number range is reported (`name` as the caller wrote it); undefined keeps the default. */
function checkRange(
  problems: OptionProblems,
  name: string,
  value: unknown,
  [min, max]: readonly [number, number],
): void {
  if (value === undefined) return;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return;
  const what = /attempts$/i.test(name) ? 'a whole number of tries' : 'whole milliseconds';
  problems.add(`\`${name}\` must be ${what} from ${min} to ${max}.`);
}

/**
 * Reports what is wrong with the timeouts or retries given (`client.` before the group's name in
 * the kit's options): a key that is not a setting, with the ones that are, and a value out of range.
 */
export function checkSettings(problems: OptionProblems, group: keyof typeof RANGES, given: unknown, prefix = ''): void {
  if (!isRecord(given)) return;
  const ranges: Readonly<Record<string, readonly [number, number]>> = RANGES[group];
  checkKnownKeys(problems, `${prefix}${group}`, given, Object.keys(ranges));
  for (const [name, range] of Object.entries(ranges))
    checkRange(problems, `${prefix}${group}.${name}`, given[name], range);
}

/** Every option of createVerifyClient checked when it is called; throws naming each problem and its fix. */
export function checkClientOptions(options: VerifyClientOptions): void {
  const problems = new OptionProblems('createVerifyClient', isRecord(options) ? options.clientSecret : undefined);
  checkKnownKeys(problems, '', options as unknown as Record<string, unknown>, CLIENT_OPTION_NAMES);
  checkServiceAccess(problems, options);
  for (const group of ['timeouts', 'retry'] as const) {
    if (options[group] !== undefined && !isRecord(options[group])) problems.add(`\`${group}\` must be an object.`);
    checkSettings(problems, group, options[group]);
  }
  checkRange(problems, 'statusReadAttempts', options.statusReadAttempts, STATUS_READ_ATTEMPTS);
  const connections = options.connections === undefined ? undefined : connectionsProblem(options.connections);
  if (connections !== undefined) problems.add(`\`connections\` ${connections}.`);
  problems.throwIfAny();
}

/** Every option createVerifyClient takes (VerifyClientOptions' keys). */
const CLIENT_OPTION_NAMES = [
  'baseUrl',
  'clientId',
  'clientSecret',
  'timeouts',
  'retry',
  'statusReadAttempts',
  'connections',
] as const satisfies readonly (keyof VerifyClientOptions)[];

/** The service's address and credentials, by the kit's own rules (https, or http to a loopback emulator). */
function checkServiceAccess(problems: OptionProblems, { baseUrl, clientId, clientSecret }: VerifyClientOptions): void {
  // Before any check can quote it: no message ever carries the secret.
  rememberSecret(clientSecret, clientId);
  checkBaseUrl(problems, baseUrl, clientSecret);
  checkCredentials(problems, clientId, clientSecret);
}

/** The settings given over the defaults (checked by checkClientOptions), one given as undefined keeping its default. */
export function withDefaults<T extends object>(defaults: T, given: Partial<T> | undefined): T {
  const set = Object.entries(given ?? {}).filter(([, value]) => value !== undefined);
  return { ...defaults, ...(Object.fromEntries(set) as Partial<T>) };
}

/** What is wrong with a `connections` value, or undefined when it is a limit the pool can take. */
export function connectionsProblem(connections: unknown): string | undefined {
  if (typeof connections === 'number' && Number.isInteger(connections) && connections >= 1) return undefined;
  return 'must be a whole number of at least 1 (the calls you run at once), or omitted for no limit';
}

/** Options of createVerifyClient. */
export interface VerifyClientOptions {
  /** The service's base address, e.g. https://verify.example.com (a path prefix is kept). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  timeouts?: VerifyClientTimeouts;
  retry?: VerifyClientRetry;
  /** Tries of one getSession on network errors and 5xx. Default 2. */
  statusReadAttempts?: number;
  /**
   * Most connections open to the service at once; a call beyond them waits for a free one. Default:
   * no limit. Set it to the calls you run at once (the sweep job sets its `concurrency`): without a
   * limit the pool opens about twice as many connections as calls in flight, and the ones seldom
   * used are closed when idle and opened again, which costs the service and this process CPU.
   */
  connections?: number;
}
