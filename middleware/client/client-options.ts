/** The client's options: where the service is, the credentials, timeouts and retries. */

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
  /** Tries of one createSession, the first included. Default 5. */
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
