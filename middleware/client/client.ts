/**
 * The backend client for the hosted service, on an undici keep-alive pool.
 *
 * Every call has connect/headers/body timeouts, follows no redirect, and checks status and
 * content type before parsing. The Basic credentials are encoded once, kept in this closure and
 * sent only in the Authorization header: no error, log line or property ever carries them.
 */
import {
  BusyFailure,
  createTransport,
  errorCodeOf,
  InFlightFailure,
  RetryableFailure,
  withRetries,
  type JsonObject,
  type ServiceResponse,
} from './client-transport.ts';
import { isKitError, KitError, KitErrorCode, redactSecretFragments } from '../errors.ts';
import { mayBePhoneNumber } from '../numbers/mask-number.ts';
import { inResultSpan, inSpan, SpanName } from '../telemetry.ts';
import type { CreateSessionInput, CreatedSession, SessionStatus, VerifyClient } from '../types.ts';
import {
  checkClientOptions,
  withDefaults,
  type VerifyClientOptions,
  type VerifyClientRetry,
} from './client-options.ts';

export type { VerifyClientOptions, VerifyClientRetry, VerifyClientTimeouts } from './client-options.ts';

const DEFAULT_RETRY = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 3000, budgetMs: 20_000, busyBudgetMs: 5000 };

/** Builds the backend client: Basic credentials only in the Authorization header, timeouts, no redirects, idempotent retries. */
export function createVerifyClient(options: VerifyClientOptions): VerifyClient {
  checkClientOptions(options);
  const retry = withDefaults(DEFAULT_RETRY, options.retry);
  const { call, close } = createTransport(options);
  // A status read never waits out a 429: the landing shows its pending page, the sweep slows down.
  const statusRetry = { ...retry, maxAttempts: options.statusReadAttempts ?? 2, busyBudgetMs: 0 };

  function createSession(input: CreateSessionInput, idempotencyKey: string): Promise<CreatedSession> {
    const attributes = { 'verify_kit.platform': input.platform, 'verify_kit.sensitivity': input.operationSensitivity };
    return inSpan(SpanName.CreateSession, attributes, async (span) => {
      const created = await createSessionOnce(input, idempotencyKey);
      span.setAttributes({ 'verify_kit.session_id': created.sessionId, 'verify_kit.replayed': created.replayed });
      return created;
    });
  }

  async function createSessionOnce(input: CreateSessionInput, idempotencyKey: string): Promise<CreatedSession> {
    checkIdempotencyKey(idempotencyKey);
    const body = JSON.stringify({ ...input, channel: 'sms' });
    const headers = { 'content-type': 'application/json', 'idempotency-key': idempotencyKey };
    const { response, mayHaveCreated } = await createWithRetries(call, retry, headers, body);
    if (response.status !== 200 || response.body.isSuccess !== true) {
      throw rejection('POST /session', response, mayHaveCreated);
    }
    return parseCreatedSession(response);
  }

  function getSession(sessionId: string): Promise<SessionStatus> {
    return inResultSpan(
      SpanName.ReadStatus,
      () => ({ 'verify_kit.session_id': sessionId }),
      () => readSession(sessionId),
      (status) => ({
        'verify_kit.status': status.status,
        ...(status.status === 'failed' ? { 'verify_kit.reason': status.reason } : {}),
      }),
    );
  }

  async function readSession(sessionId: string): Promise<SessionStatus> {
    const path = `/session/${encodeURIComponent(sessionId)}`;
    const response = await withRetries(statusRetry, () => call('GET', path));
    // The read's success code is not stated: any 2xx is read, and its body checked.
    if (response.status < 200 || response.status > 299) throw rejection('GET /session/{id}', response);
    return parseSessionStatus(response.body);
  }

  return {
    createSession,
    getSession,
    close,
  };
}

/** An HTTP header value carries, as written, visible ASCII with spaces or tabs between. */
const HEADER_SAFE_KEY = /^[\x21-\x7e]([\t\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * A key the header can carry as written, refused before any request: undici refuses a character
 * past U+00FF (a try that would be retried as a network error), and one from U+0080 goes out as a
 * byte a service reading UTF-8 reads as another key. The interface counts characters, not UTF-16 units.
 */
function checkIdempotencyKey(key: string): void {
  const characters = [...key].length;
  if (characters === 0 || characters > 255) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `createSession: the Idempotency-Key must be 1 to 255 characters; it has ${characters}.`,
    );
  }
  if (!HEADER_SAFE_KEY.test(key)) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'createSession: the Idempotency-Key must hold only what an HTTP header value carries as written: ' +
        'visible ASCII characters (U+0021 to U+007E), with spaces or tabs only between them.',
    );
  }
}

/**
 * The service's refusal. `mayHaveCreated`: an earlier try of the same create that may have made
 * the session, kept as the cause, so the refusal is not read as certain that none exists.
 */
function rejection(call: string, response: ServiceResponse, mayHaveCreated?: KitError): KitError {
  const serviceErrorCode = errorCodeOf(response.body) ?? 'unknown';
  const why =
    serviceErrorCode === 'idempotency_key_reused'
      ? ': the Idempotency-Key was already used with a different payload (a new attempt needs a new key)'
      : '';
  return new KitError(
    KitErrorCode.ServiceRejected,
    `${call} was refused: ${response.status} ${serviceErrorCode}${why}.`,
    {
      serviceStatus: response.status,
      serviceErrorCode,
      ...(mayHaveCreated === undefined ? {} : { cause: mayHaveCreated }),
    },
  );
}

function parseCreatedSession(response: ServiceResponse): CreatedSession {
  return checkedCreatedSession(response.body, response.replayed);
}

/**
 * A session id as the kit stores it and the landing takes it back from the browser: printable
 * ASCII without spaces, 1 to 256 characters.
 */
export const SESSION_ID_PATTERN = /^[\x21-\x7e]{1,256}$/;

/**
 * A create answer the kit can use (from the service, or a ready client: the app's code), or a
 * protocol error. Its sessionId must be one the landing accepts back: with any other, the user's
 * return could never complete the attempt.
 */
export function checkedCreatedSession(body: Record<string, unknown>, replayed: boolean): CreatedSession {
  const { sessionId, verifyUrl, handoff, expiresInSeconds } = body;
  if (
    typeof sessionId !== 'string' ||
    !SESSION_ID_PATTERN.test(sessionId) ||
    typeof verifyUrl !== 'string' ||
    !/^https?:\/\//i.test(verifyUrl) ||
    typeof handoff !== 'string' ||
    handoff.length === 0 ||
    typeof expiresInSeconds !== 'number' ||
    !Number.isInteger(expiresInSeconds) ||
    expiresInSeconds <= 0
  ) {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'POST /session succeeded without a usable sessionId, verifyUrl, handoff and expiresInSeconds.',
    );
  }
  // The session id is logged and traced, the address and handoff go in a page: none may carry the credentials.
  if ([sessionId, verifyUrl, handoff].some((value) => redactSecretFragments(value) !== value)) {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'POST /session answered a sessionId, verifyUrl or handoff carrying part of the client credentials; it is not used.',
    );
  }
  return { sessionId, verifyUrl, handoff, expiresInSeconds, replayed };
}

/**
 * A failure reason as the kit stores, logs, traces and counts it: a code (letters, digits, `_`,
 * `.`, `-`, at most 64) carrying no part of the client secret and no run of digits a phone number
 * may be. Anything else, or none, is `unknown`: the reason is the service's text, and a proxy in
 * front of it may quote the request, Authorization header included, or the number it texted.
 */
const REASON_CODE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export function reasonOf(value: unknown): string {
  // A secret, and a run of its base64, look like a code too: one carrying any part of them is not kept.
  return typeof value === 'string' &&
    REASON_CODE.test(value) &&
    redactSecretFragments(value) === value &&
    !mayBePhoneNumber(value)
    ? value
    : 'unknown';
}

function parseSessionStatus(body: JsonObject): SessionStatus {
  const state = typeof body.state === 'string' ? body.state : undefined;
  const userRef = typeof body.userRef === 'string' ? body.userRef : undefined;
  switch (body.status) {
    case 'pending':
      // An unknown id, or another client's, reads as a bare pending.
      return { status: 'pending', state, userRef };
    case 'verified':
      // A success always echoes both: one without them is not the service's answer.
      if (state === undefined || userRef === undefined) {
        throw new KitError(
          KitErrorCode.ServiceProtocolError,
          'GET /session/{id} answered verified without the echoed state and userRef.',
        );
      }
      return { status: 'verified', state, userRef };
    case 'failed':
      // An unknown or missing reason is a generic failure, not an error.
      return {
        status: 'failed',
        reason: reasonOf(body.reason),
        state,
        userRef,
      };
    default:
      throw new KitError(KitErrorCode.ServiceProtocolError, 'GET /session/{id} answered without a known status.');
  }
}

/**
 * POST /session with its retries. `service_busy` says no session exists (the start is given back),
 * so it is thrown only when every try met a 429; after a try that may have created the session
 * (a lost answer, a 5xx, one still in flight), that try's error is thrown instead. An answer is
 * returned with that try's error too: a refusal after it is no proof that nothing was created.
 */
async function createWithRetries(
  call: ReturnType<typeof createTransport>['call'],
  retry: Required<VerifyClientRetry>,
  headers: Record<string, string>,
  body: string,
): Promise<{ response: ServiceResponse; mayHaveCreated: KitError | undefined }> {
  let mayHaveCreated: KitError | undefined;
  const response = await withRetries(retry, async () => {
    try {
      const answer = await call('POST', '/session', headers, body);
      if (answer.status === 409 && errorCodeOf(answer.body) === 'idempotency_request_in_flight') {
        // The first try is still running on the service: wait and ask again with the same key.
        throw new InFlightFailure(
          new KitError(KitErrorCode.ServiceUnavailable, 'The verification service was still processing this attempt.', {
            serviceStatus: 409,
            serviceErrorCode: 'idempotency_request_in_flight',
          }),
        );
      }
      return answer;
    } catch (error) {
      if (error instanceof RetryableFailure && !(error instanceof BusyFailure)) mayHaveCreated ??= error.failure;
      throw error;
    }
  }).catch((error: unknown) => {
    throw isKitError(error, KitErrorCode.ServiceBusy) && mayHaveCreated !== undefined ? mayHaveCreated : error;
  });
  return { response, mayHaveCreated };
}
