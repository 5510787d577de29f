/**
 * The backend client for the hosted service, on an undici keep-alive pool.
 *
 * Every call has connect/headers/body timeouts, follows no redirect, and checks status and
 * content type before parsing. The Basic credentials are encoded once, kept in this closure and
 * sent only in the Authorization header: no error, log line or property ever carries them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { KitError, KitErrorCode } from './errors.ts';
import { inSpan, SpanName } from './telemetry.ts';
import type { CreateSessionInput, CreatedSession, SessionStatus, VerifyClient } from './types.ts';

export interface VerifyClientTimeouts {
  /** TCP + TLS connect. Default 5000 ms. */
  connectMs?: number;
  /** Until the response headers arrive. Default 10000 ms. */
  headersMs?: number;
  /** Between body chunks. Default 10000 ms. */
  bodyMs?: number;
}

export interface VerifyClientRetry {
  /** Tries of one createSession, the first included. Default 5. */
  maxAttempts?: number;
  /** First backoff; doubles each retry, with full jitter. Default 200 ms. */
  baseDelayMs?: number;
  /** Cap of one backoff. Default 3000 ms. */
  maxDelayMs?: number;
  /** No retry starts after this much time since the first try (well inside the 120 s handoff). Default 20000 ms. */
  budgetMs?: number;
}

export interface VerifyClientOptions {
  /** The service's base address, e.g. https://verify.example.com (a path prefix is kept). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  timeouts?: VerifyClientTimeouts;
  retry?: VerifyClientRetry;
  /** Tries of one getSession on network errors and 5xx. Default 2. */
  statusReadAttempts?: number;
}

type JsonObject = Record<string, unknown>;

interface ServiceResponse {
  status: number;
  replayed: boolean;
  body: JsonObject;
}

/** Thrown inside this module for answers worth another try; never leaves it. */
class RetryableFailure extends Error {
  constructor(readonly failure: KitError) {
    super(failure.message);
  }
}

export function createVerifyClient(options: VerifyClientOptions): VerifyClient {
  const base = parseBaseUrl(options.baseUrl);
  const authorization = basicAuthorization(options.clientId, options.clientSecret);
  const timeouts = { connectMs: 5000, headersMs: 10_000, bodyMs: 10_000, ...options.timeouts };
  const retry = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 3000, budgetMs: 20_000, ...options.retry };
  const statusReadAttempts = options.statusReadAttempts ?? 2;
  const pool = new Pool(base.origin, {
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: 10_000,
  });

  async function call(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<ServiceResponse> {
    let response;
    try {
      response = await pool.request({
        method,
        path: base.pathPrefix + path,
        headers: { ...headers, authorization, accept: 'application/json' },
        body,
      });
    } catch (error) {
      throw new RetryableFailure(networkFailure(error));
    }
    const { statusCode, headers: responseHeaders } = response;
    const text = await response.body.text().catch((error: unknown) => {
      throw new RetryableFailure(networkFailure(error));
    });
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

  function createSession(input: CreateSessionInput, idempotencyKey: string): Promise<CreatedSession> {
    const attributes = { 'verify_kit.platform': input.platform, 'verify_kit.sensitivity': input.operationSensitivity };
    return inSpan(SpanName.CreateSession, attributes, async (span) => {
      const created = await createSessionOnce(input, idempotencyKey);
      span.setAttributes({ 'verify_kit.session_id': created.sessionId, 'verify_kit.replayed': created.replayed });
      return created;
    });
  }

  async function createSessionOnce(input: CreateSessionInput, idempotencyKey: string): Promise<CreatedSession> {
    if (idempotencyKey.length === 0 || idempotencyKey.length > 255) {
      throw new KitError(
        KitErrorCode.InvalidOptions,
        'createSession: the Idempotency-Key must be 1 to 255 characters.',
      );
    }
    const body = JSON.stringify({ ...input, channel: 'sms' });
    const headers = { 'content-type': 'application/json', 'idempotency-key': idempotencyKey };
    const response = await withRetries(retry, async () => {
      const answer = await call('POST', '/session', headers, body);
      if (answer.status === 409 && errorCodeOf(answer.body) === 'idempotency_request_in_flight') {
        // The first try is still running on the service: wait and ask again with the same key.
        throw new RetryableFailure(
          new KitError(KitErrorCode.ServiceUnavailable, 'The verification service was still processing this attempt.', {
            serviceStatus: 409,
            serviceErrorCode: 'idempotency_request_in_flight',
          }),
        );
      }
      return answer;
    });
    if (response.status !== 200 || response.body.isSuccess !== true) throw rejection('POST /session', response);
    return parseCreatedSession(response);
  }

  function getSession(sessionId: string): Promise<SessionStatus> {
    return inSpan(SpanName.ReadStatus, { 'verify_kit.session_id': sessionId }, async (span) => {
      const path = `/session/${encodeURIComponent(sessionId)}`;
      const response = await withRetries({ ...retry, maxAttempts: statusReadAttempts }, () => call('GET', path, {}));
      if (response.status !== 200) throw rejection('GET /session/{id}', response);
      const status = parseSessionStatus(response.body);
      span.setAttributes({
        'verify_kit.status': status.status,
        ...(status.status === 'failed' ? { 'verify_kit.reason': status.reason } : {}),
      });
      return status;
    });
  }

  return {
    createSession,
    getSession,
    async close() {
      if (!pool.closed) await pool.close();
    },
  };
}

async function withRetries<T>(retry: Required<VerifyClientRetry>, attempt: () => Promise<T>): Promise<T> {
  const startedAt = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof RetryableFailure)) throw error;
      const delay = Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (tries - 1));
      const outOfTime = Date.now() - startedAt + delay > retry.budgetMs;
      if (tries >= retry.maxAttempts || outOfTime) throw error.failure;
      await sleep(delay);
    }
  }
}

function parseBaseUrl(baseUrl: string): { origin: string; pathPrefix: string } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `\`baseUrl\` must be an absolute http(s) URL such as https://verify.example.com; got "${baseUrl}".`,
    );
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.search ||
    url.hash ||
    url.username ||
    url.password
  ) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      '`baseUrl` must be an http(s) URL without query, fragment or credentials (credentials go in `clientId` and `clientSecret`).',
    );
  }
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

function basicAuthorization(clientId: string, clientSecret: string): string {
  if (typeof clientId !== 'string' || clientId.length === 0 || clientId.includes(':')) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      '`clientId` must be the non-empty client id issued by the portal, without ":".',
    );
  }
  if (typeof clientSecret !== 'string' || clientSecret.length === 0) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      '`clientSecret` must be the non-empty secret issued by the portal (read it from the server environment).',
    );
  }
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
      `The verification service answered ${status} with content type "${type ?? 'none'}", not JSON.`,
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

function errorCodeOf(body: JsonObject | undefined): string | undefined {
  return typeof body?.errorCode === 'string' ? body.errorCode : undefined;
}

function rejection(call: string, response: ServiceResponse): KitError {
  const serviceErrorCode = errorCodeOf(response.body) ?? 'unknown';
  return new KitError(KitErrorCode.ServiceRejected, `${call} was refused: ${response.status} ${serviceErrorCode}.`, {
    serviceStatus: response.status,
    serviceErrorCode,
  });
}

function parseCreatedSession(response: ServiceResponse): CreatedSession {
  const { sessionId, verifyUrl, handoff, expiresInSeconds } = response.body;
  if (
    typeof sessionId !== 'string' ||
    sessionId.length === 0 ||
    typeof verifyUrl !== 'string' ||
    !/^https?:\/\//i.test(verifyUrl) ||
    typeof handoff !== 'string' ||
    handoff.length === 0 ||
    typeof expiresInSeconds !== 'number'
  ) {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'POST /session succeeded without a usable sessionId, verifyUrl, handoff and expiresInSeconds.',
    );
  }
  return { sessionId, verifyUrl, handoff, expiresInSeconds, replayed: response.replayed };
}

function parseSessionStatus(body: JsonObject): SessionStatus {
  const state = typeof body.state === 'string' ? body.state : undefined;
  const userRef = typeof body.userRef === 'string' ? body.userRef : undefined;
  switch (body.status) {
    case 'pending':
    case 'verified':
      return { status: body.status, state, userRef };
    case 'failed':
      // An unknown or missing reason is a generic failure, not an error.
      return {
        status: 'failed',
        reason: typeof body.reason === 'string' && body.reason ? body.reason : 'unknown',
        state,
        userRef,
      };
    default:
      throw new KitError(KitErrorCode.ServiceProtocolError, 'GET /session/{id} answered without a known status.');
  }
}
