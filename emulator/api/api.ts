/** The backend API: POST /session (create) and GET /session/{id} (status read), both with Basic auth. */
import express, { type NextFunction, type Request, type Response } from 'express';
import { clientOf, requireClient } from './auth.ts';
import { pause, type EmulatorContext } from '../context.ts';
import { forwardingRejections, sendError } from '../errors.ts';
import { idempotencyKeyLength, MAX_IDEMPOTENCY_KEY_LENGTH, type Claim } from './idempotency.ts';
import { rateLimited } from './rate-limits.ts';
import { HANDOFF_TTL_SECONDS, type Session } from './sessions.ts';
import { sendOtpOnce, smsDeferredAtCreate } from '../sms/sms.ts';
import { validateCreateRequest } from './validation.ts';

/** The create errors the spec names, whose HTTP status it leaves open (a test may vary it: `validationStatus`). */
const SPEC_VALIDATION_CODES: ReadonlySet<string> = new Set([
  'invalid_return_url',
  'invalid_channel',
  'destination_required',
  'invalid_operation_sensitivity',
]);

const jsonBody = express.json({ type: ['application/json', 'application/*+json'], limit: '16kb' });

export function apiRouter(context: EmulatorContext): express.Router {
  // /session and /session/{id} only: another case or a trailing slash is an unknown path (404).
  const router = express.Router({ caseSensitive: true, strict: true });
  // Read per request, so a test's bareErrors fault shapes this answer's errors (errors.ts). Set for
  // every path under /session before any route: a path it cannot decode, or does not have, is
  // refused before a route's own handlers run.
  router.use('/session', (_req: Request, res: Response, next: NextFunction) => {
    res.locals.bareErrors = context.faults.settings.bareErrors;
    next();
  });
  const auth = requireClient(context.clients);
  const createLimit = rateLimited(context.rateLimits, 'create', () => (context.stats.createsLimited += 1));
  const statusLimit = rateLimited(context.rateLimits, 'status', () => {
    context.stats.statusReads += 1;
    context.stats.statusReadsLimited += 1;
  });
  router.post(
    '/session',
    auth,
    createLimit,
    jsonBody,
    forwardingRejections((req, res) => createSession(context, req, res)),
  );
  router.get(
    '/session/:sessionId',
    auth,
    statusLimit,
    forwardingRejections((req, res) => readSession(context, req, res)),
  );
  // Body-parser errors (bad JSON, too large, bad charset) and an undecodable path on this API answer
  // in the service's error shape.
  router.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const { status, type } = error as { status?: unknown; type?: unknown };
    if (typeof status === 'number' && status >= 400 && status < 500) {
      sendError(res, status, 'invalid_request', clientErrorMessage(status, type));
      return;
    }
    next(error);
  });
  return router;
}

/** Body-parser's errors carry a `type`; the router's failed decoding of a path parameter does not. */
function clientErrorMessage(status: number, type: unknown): string {
  if (typeof type !== 'string') return 'The request path is not valid percent-encoding.';
  return status === 413 ? 'The body is too large.' : 'The body is not valid JSON.';
}

async function createSession(context: EmulatorContext, req: Request, res: Response): Promise<void> {
  // Its answer (and a replay of it) carries the handoff, a single-use capability: no cache keeps it.
  res.set('Cache-Control', 'no-store');
  const key = req.get('idempotency-key');
  if (refusedBeforeClaim(context, req, res, key)) return;
  const client = clientOf(res);
  const claim: Claim | undefined =
    key === undefined ? undefined : context.idempotency.claim(client.clientId, key, req.body);
  if (answeredByClaim(context, res, claim)) return;
  try {
    if (!(await pause(context, context.faults.settings.createDelayMs))) return;
    const validation = validateCreateRequest(req.body, client);
    if (!validation.ok) {
      const status = SPEC_VALIDATION_CODES.has(validation.errorCode) ? context.faults.settings.validationStatus : 400;
      sendError(res, status, validation.errorCode, validation.message);
      return;
    }
    const session = context.sessions.create({ ...validation.value, clientId: client.clientId });
    session.idempotencyKey = key;
    context.stats.creates += 1;
    if (!smsDeferredAtCreate(context, session)) sendOtpOnce(context, session);
    const body = createdBody(context, session);
    claim?.store(body);
    if (context.faults.takeCreateReset('after')) {
      req.socket.destroy(); // the service acted, the caller never hears: the lost-response case
      return;
    }
    res.json(body);
  } finally {
    claim?.release(); // no-op once stored; otherwise a failed attempt stays retryable
  }
}

/** Injected faults, then the request's shape: true when it was answered (or its connection dropped). */
function refusedBeforeClaim(context: EmulatorContext, req: Request, res: Response, key: string | undefined): boolean {
  const failureStatus = context.faults.takeCreateFailure();
  if (failureStatus !== undefined) {
    sendError(
      res,
      failureStatus,
      'service_unavailable',
      'The service is temporarily unavailable (injected fault). Retry with the same Idempotency-Key.',
    );
    return true;
  }
  if (context.faults.takeCreateReset('before')) {
    req.socket.destroy();
    return true;
  }
  if (!req.is(['application/json', 'application/*+json'])) {
    sendError(res, 400, 'invalid_request', 'Send a JSON object with Content-Type: application/json.');
    return true;
  }
  if (key !== undefined && (key.length === 0 || idempotencyKeyLength(key) > MAX_IDEMPOTENCY_KEY_LENGTH)) {
    sendError(
      res,
      400,
      'invalid_idempotency_key',
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
    );
    return true;
  }
  return false;
}

/** A key still running, reused with another payload, or replayed: true when the claim answered. */
function answeredByClaim(
  context: EmulatorContext,
  res: Response,
  claim: Claim | undefined,
): claim is Exclude<Claim, { kind: 'new' }> {
  if (claim?.kind === 'in_flight') {
    sendError(
      res,
      409,
      'idempotency_request_in_flight',
      'A request with this Idempotency-Key is still running. Wait and retry with the same key.',
    );
    return true;
  }
  if (claim?.kind === 'key_reused') {
    sendError(res, 422, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different payload.');
    return true;
  }
  if (claim?.kind === 'too_deep') {
    sendError(res, 400, 'invalid_request', 'The body nests too deeply to be a create request.');
    return true;
  }
  if (claim?.kind === 'replay') {
    context.stats.replays += 1;
    res.set('Idempotent-Replayed', 'true').json(claim.body);
    return true;
  }
  return false;
}

async function readSession(context: EmulatorContext, req: Request, res: Response): Promise<void> {
  context.stats.statusReads += 1;
  if (!(await pause(context, context.faults.settings.statusDelayMs))) return;
  const failureStatus = context.faults.takeStatusFailure();
  if (failureStatus !== undefined) {
    sendError(res, failureStatus, 'service_unavailable', 'The service is temporarily unavailable (injected fault).');
    return;
  }
  res.set('Cache-Control', 'no-store');
  const session = context.sessions.get(String(req.params.sessionId));
  // Unknown, expired and other clients' ids read identically: pending, and nothing else.
  if (session === undefined || session.clientId !== clientOf(res).clientId) {
    res.json({ isSuccess: true, status: 'pending', ...unknownFields(context) });
    return;
  }
  res.json({
    ...unknownFields(context),
    isSuccess: true,
    status: session.status,
    ...(session.status === 'failed' ? { reason: session.reason } : {}),
    state: session.echo?.state ?? session.state,
    userRef: session.echo?.userRef ?? session.userRef,
    assertionExchanged: context.faults.settings.assertionExchanged,
  });
}

/** A field no client knows, first in the body, when a test asked for it: a client must ignore it. */
function unknownFields(context: EmulatorContext): object {
  return context.faults.settings.unknownFields ? { serviceDetail: { kind: 'unknown', note: 'ignore me' } } : {};
}

function createdBody(context: EmulatorContext, session: Session): object {
  return {
    ...unknownFields(context),
    isSuccess: true,
    sessionId: session.id,
    verifyUrl: `${context.pageOrigin}/verify`,
    handoff: session.handoff,
    expiresInSeconds: HANDOFF_TTL_SECONDS,
    [context.faults.settings.bindingField]: 'form_post',
  };
}
