/**
 * How the client talks to the service: one undici keep-alive pool, connect/headers/body timeouts,
 * no redirects followed, status and content type checked before parsing, and the Basic
 * credentials encoded once and sent only in the Authorization header.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import {
  withDefaults,
  type VerifyClientOptions,
  type VerifyClientRetry,
  type VerifyClientTimeouts,
} from './client-options.ts';
import { KitError, KitErrorCode, redactSecretFragments } from '../errors.ts';
import { maskNumbersInText } from '../numbers/mask-number.ts';

export type JsonObject = Record<string, unknown>;

export interface ServiceResponse {
  status: number;
  replayed: boolean;
  body: JsonObject;
}

/** Thrown inside the client for answers worth another try; never leaves it. */
export class RetryableFailure extends Error {
  constructor(readonly failure: KitError) {
    super(failure.message);
  }
}

/**
 * The service answered 429: worth another try after `retryAfterMs`, where a caller waits (a
 * create); thrown as the KitError `service_busy` where nobody should (a status read).
 */
export class BusyFailure extends RetryableFailure {
  constructor(
    failure: KitError,
    readonly retryAfterMs: number,
  ) {
    super(failure);
  }
}

/**
 * The service answered 409 `idempotency_request_in_flight`: the first try of this create is still
 * running there. The client waits and asks again with the same key; such an answer is no failed
 * try, so only `budgetMs` bounds the waiting, never `maxAttempts`.
 */
export class InFlightFailure extends RetryableFailure {}

/**
 * The most a service answer may hold: a status or a create answer is well under 1 KiB, so a larger
 * one is not the service's, and is never buffered (a hostile service or proxy could fill memory).
 */
export const MAX_RESPONSE_BYTES = 256 * 1024;

/** undici's code for an answer past the pool's `maxResponseSize`: it stopped reading and closed the socket. */
const OVER_MAX_SIZE = 'UND_ERR_RES_EXCEEDED_MAX_SIZE';

/**
 * The whole body within `bodyMs` of the headers (undici's body timeout is per chunk, so a body
 * sent a byte at a time would hold a landing or the sweep forever); the pool stops one past
 * MAX_RESPONSE_BYTES. Read by undici's own `text()` (UTF-8, a byte order mark dropped): reading
 * the stream chunk by chunk here cost every status read 10 µs more.
 */
async function readBody(body: Dispatcher.ResponseData['body'], status: number, bodyMs: number): Promise<string> {
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    body.destroy();
  }, bodyMs);
  try {
    return await body.text();
  } catch (error) {
    if (late) throw new RetryableFailure(networkFailure({ code: 'body_timeout' }));
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === OVER_MAX_SIZE) {
      throw new KitError(
        KitErrorCode.ServiceProtocolError,
        `The verification service answered ${status} with a body over ${MAX_RESPONSE_BYTES} bytes; it was not read.`,
        { serviceStatus: status },
      );
    }
    throw new RetryableFailure(networkFailure(error));
  } finally {
    clearTimeout(timer);
  }
}

/** When the service says nothing usable, wait a second; never longer than an hour. */
const DEFAULT_RETRY_AFTER_MS = 1000;
const MAX_RETRY_AFTER_MS = 3_600_000;

/** `Retry-After` as delta-seconds or an HTTP date (RFC 9110), in ms from `now`. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number {
  const value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  let ms = Number.NaN;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else if (IMF_OR_RFC850_DATE.test(value)) ms = Date.parse(value) - now;
  // asctime names no zone; it is GMT (Date.parse would read it in the local zone).
  else if (ASCTIME_DATE.test(value)) ms = Date.parse(`${value} GMT`) - now;
  return boundedRetryAfterMs(ms);
}

/**
 * The HTTP-date formats: only these are read as dates, as Date.parse reads "-5" or "1.5" as a
 * date long past, which would be no wait at all.
 */
const IMF_OR_RFC850_DATE = /^[a-z]{3,9}, \d{2}[ -][a-z]{3}[ -]\d{2}(\d{2})? \d{2}:\d{2}:\d{2} GMT$/i;
const ASCTIME_DATE = /^[a-z]{3} [a-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/i;

/**
 * A wait the service (or a ready client, the app's code) named, as the kit waits it: from 0 to an
 * hour, and a second when it names nothing usable (NaN, Infinity).
 */
export function boundedRetryAfterMs(ms: number): number {
  if (!Number.isFinite(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** A 429, whatever its body (the service does not show the body's shape, so the kit never reads it). */
function busyFailure(headers: Record<string, string | string[] | undefined>): BusyFailure {
  const waitMs = retryAfterMs(headers['retry-after']);
  const failure = new KitError(KitErrorCode.ServiceBusy, 'The verification service answered 429 (rate limited).', {
    serviceStatus: 429,
    retryAfterSeconds: Math.ceil(waitMs / 1000),
  });
  return new BusyFailure(failure, waitMs);
}

/** The pool and the one way to call the service; `close` ends the pool. */
export function createTransport(options: VerifyClientOptions) {
  const base = parseBaseUrl(options.baseUrl);
  const callHeaders = headersOfEveryCall(options);
  // Checked by createVerifyClient (checkClientOptions) before the pool is made.
  const timeouts = timeoutsOf(options.timeouts);
  const pool = new Pool(base.origin, {
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: 10_000,
    maxResponseSize: MAX_RESPONSE_BYTES,
    ...(options.connections === undefined ? {} : { connections: options.connections }),
  });

  async function call(
    method: 'GET' | 'POST',
    path: string,
    headers?: Record<string, string>,
    body?: string,
  ): Promise<ServiceResponse> {
    let response;
    try {
      response = await pool.request({
        method,
        path: base.pathPrefix + path,
        headers: headers === undefined ? callHeaders : { ...headers, ...callHeaders },
        body,
      });
    } catch (error) {
      throw new RetryableFailure(networkFailure(error));
    }
    const { statusCode, headers: responseHeaders } = response;
    const text = await readBody(response.body, statusCode, timeouts.bodyMs);
    if (statusCode === 429) throw busyFailure(responseHeaders);
    if (statusCode >= 300 && statusCode < 400) {
      throw new KitError(
        KitErrorCode.ServiceProtocolError,
        `The verification service answered ${statusCode} (a redirect); the kit follows none.`,
        {
          serviceStatus: statusCode,
        },
      );
    }
    const parsed = parseJsonBody(statusCode, responseHeaders['content-type'], text);
    if (statusCode >= 500) {
      throw new RetryableFailure(
        new KitError(KitErrorCode.ServiceUnavailable, `The verification service answered ${statusCode}.`, {
          serviceStatus: statusCode,
          serviceErrorCode: errorCodeOf(parsed),
        }),
      );
    }
    return { status: statusCode, replayed: responseHeaders['idempotent-replayed'] === 'true', body: parsed ?? {} };
  }

  return {
    call,
    async close(): Promise<void> {
      if (!pool.closed) await pool.close();
    },
  };
}

/**
 * Tries `attempt` again after retryable failures, with jittered exponential backoff, within
 * `maxAttempts` and `budgetMs`. A 429 waits at least its Retry-After and only within `busyBudgetMs`
 * (0: never retried). An answer that the first try is still running uses no try: within `budgetMs`.
 */
export async function withRetries<T>(retry: Required<VerifyClientRetry>, attempt: () => Promise<T>): Promise<T> {
  const startedAt = Date.now();
  let failedTries = 0;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof RetryableFailure)) throw error;
      if (!(error instanceof InFlightFailure)) failedTries++;
      const backoff = Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (tries - 1));
      const busy = error instanceof BusyFailure;
      const delay = busy ? Math.max(backoff, error.retryAfterMs) : backoff;
      const budget = busy ? Math.min(retry.budgetMs, retry.busyBudgetMs) : retry.budgetMs;
      const outOfTime = Date.now() - startedAt + delay > budget;
      if (failedTries >= retry.maxAttempts || outOfTime) throw error.failure;
      await sleep(delay);
    }
  }
}

/** The origin and path prefix of a baseUrl createVerifyClient has checked (checkClientOptions). */
function parseBaseUrl(baseUrl: string): { origin: string; pathPrefix: string } {
  const url = new URL(baseUrl);
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

/** The timeouts with their defaults (one given as undefined keeps its default, as an omitted one). */
function timeoutsOf(options: VerifyClientTimeouts | undefined): Required<VerifyClientTimeouts> {
  return withDefaults({ connectMs: 5000, headersMs: 10_000, bodyMs: 10_000 }, options);
}

/** The credentials and the one type the kit parses, on every call (built once). */
function headersOfEveryCall(options: VerifyClientOptions): Record<string, string> {
  return { authorization: basicAuthorization(options.clientId, options.clientSecret), accept: 'application/json' };
}

/** The Basic credentials of a clientId and clientSecret createVerifyClient has checked (checkClientOptions). */
function basicAuthorization(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${clientSecret}`, 'utf8').toString('base64')}`;
}

function networkFailure(error: unknown): KitError {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'unknown';
  // Only the error's code travels on: undici errors describe sockets, never our headers, but we keep no reference.
  return new KitError(KitErrorCode.ServiceUnavailable, `The verification service could not be reached (${code}).`);
}

function parseJsonBody(
  status: number,
  contentType: string | string[] | undefined,
  text: string,
): JsonObject | undefined {
  const type = Array.isArray(contentType) ? contentType[0] : contentType;
  const isJson = type !== undefined && /^application\/([a-z.+-]*\+)?json\s*(;|$)/i.test(type);
  if (!isJson) {
    if (status >= 500) return undefined;
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      `The verification service answered ${status} with content type "${quotedText(type)}", not JSON.`,
      {
        serviceStatus: status,
      },
    );
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as JsonObject;
  } catch {
    // fall through
  }
  if (status >= 500) return undefined;
  throw new KitError(
    KitErrorCode.ServiceProtocolError,
    `The verification service answered ${status} with a body that is not a JSON object.`,
    {
      serviceStatus: status,
    },
  );
}

/**
 * Text from the service as a message quotes it: short, without any part of the credentials it may
 * echo, and with a number it may quote (the destination it was sent) masked before the cut.
 */
function quotedText(value: string | undefined): string {
  if (value === undefined) return 'none';
  const text = maskNumbersInText(redactSecretFragments(value));
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/** The service's error code, at most 100 characters, quoted as `quotedText` quotes (a proxy may quote the header it refused). */
export function errorCodeOf(body: JsonObject | undefined): string | undefined {
  return typeof body?.errorCode === 'string' ? quotedText(body.errorCode) : undefined;
}
