/**
 * The test-control API under /_control: outbox, virtual clock, faults, rate limits, stats, reset and
 * ending a session as if on the hosted page. Mounted only when control is on; answers loopback
 * callers only, and only under a loopback Host: a page in the developer's browser that rebinds its
 * own name to 127.0.0.1 reaches the peer check as loopback, but still sends its own name as the Host.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { LATEST_CLOCK_MS } from '../clock.ts';
import type { EmulatorContext } from '../context.ts';
import { resetContext } from '../context.ts';
import { sendError } from '../errors.ts';
import { mountSessionTools } from './control-sessions.ts';
import { parseFaultUpdate } from './faults.ts';
import { parseRateLimitUpdate } from '../config/rate-limit-settings.ts';

export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** `localhost`, `*.localhost`, `127.0.0.1` or `[::1]`, with any port. */
export function isLoopbackHost(host: string | undefined): boolean {
  const match = /^(\[::1\]|[a-z0-9.-]+)(?::\d{1,5})?$/i.exec(host ?? '');
  const name = match?.[1]?.toLowerCase();
  if (name === undefined) return false;
  return name === 'localhost' || name.endsWith('.localhost') || name === '127.0.0.1' || name === '[::1]';
}

/**
 * Anything not from this machine gets the same 404 as a path that does not exist; a loopback
 * caller naming another host gets 421 (Misdirected Request: DNS rebinding).
 */
export function loopbackOnly(req: Request, res: Response, next: NextFunction): void {
  if (!isLoopbackAddress(req.socket.remoteAddress)) {
    sendError(res, 404, 'not_found', 'Not found.');
    return;
  }
  if (!isLoopbackHost(req.headers.host)) {
    sendError(res, 421, 'misdirected_request', 'The control API and dev inbox answer only a loopback Host.');
    return;
  }
  next();
}

/** An Origin header naming a loopback site (`http(s)://` a loopback Host); `null` and anything else is foreign. */
function isLoopbackOrigin(origin: string): boolean {
  const match = /^https?:\/\/([^/]+)$/i.exec(origin);
  return match !== null && isLoopbackHost(match[1]);
}

/**
 * A page on another site in the developer's browser can send a simple request (a form, or
 * `text/plain`) without asking first: a control POST must come from no browser or from a loopback
 * page (its Origin, and `Sec-Fetch-Site` not `cross-site`), and carry `application/json`, which no
 * simple request can.
 */
export function sameSiteJsonOnly(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'POST') return next();
  const origin = req.headers.origin;
  if ((origin !== undefined && !isLoopbackOrigin(origin)) || req.headers['sec-fetch-site'] === 'cross-site') {
    sendError(res, 403, 'cross_site_request', 'The control API answers no request from another site.');
    return;
  }
  if (!req.is('application/json')) {
    sendError(
      res,
      415,
      'unsupported_media_type',
      'A control POST must carry a JSON body (Content-Type: application/json).',
    );
    return;
  }
  next();
}

export function controlRouter(context: EmulatorContext): express.Router {
  const router = express.Router();
  router.use(loopbackOnly, sameSiteJsonOnly, express.json({ limit: '16kb' }));
  mountClockAndFaults(router, context);
  mountRateLimits(router, context);
  mountReads(router, context);
  router.post('/reset', (_req, res) => {
    resetContext(context);
    res.json({ isSuccess: true });
  });
  router.post('/sessions/:sessionId/complete', (req, res) => completeSession(context, req, res));
  mountSessionTools(router, context);
  router.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      sendError(res, 400, 'invalid_request', 'The body is not valid JSON.');
      return;
    }
    next(error);
  });
  return router;
}

/** What a test reads: the outbox, enrolled passkeys, the counters. */
function mountReads(router: express.Router, context: EmulatorContext): void {
  router.get('/outbox', (_req, res) => {
    res.json({ messages: context.outbox.list() });
  });

  // Enrolled passkeys (never their keys): which client and userRef own them, and how often each was used.
  router.get('/passkeys', (_req, res) => {
    const passkeys = context.passkeys
      .all()
      .map(({ clientId, userRef, id, uses }) => ({ clientId, userRef, credentialId: id, uses }));
    res.json({ passkeys });
  });

  router.get('/stats', (_req, res) => {
    res.json(context.stats);
  });
}

/** What a test changes: the virtual clock and the injected faults. */
function mountClockAndFaults(router: express.Router, context: EmulatorContext): void {
  router.post('/clock', (req, res) => {
    const advanceSeconds: unknown = req.body?.advanceSeconds;
    if (typeof advanceSeconds !== 'number' || !Number.isFinite(advanceSeconds) || advanceSeconds < 0) {
      sendError(res, 400, 'invalid_request', 'advanceSeconds must be a non-negative number.');
      return;
    }
    // Whatever clock the emulator was given: past that date every date it writes throws.
    if (context.clock.now() + advanceSeconds * 1000 > LATEST_CLOCK_MS) {
      sendError(
        res,
        400,
        'invalid_request',
        'advanceSeconds would move the clock past 9999-12-31, the last date it can show.',
      );
      return;
    }
    context.clock.advance({ seconds: advanceSeconds });
    res.json({ now: new Date(context.clock.now()).toISOString() });
  });

  router.get('/faults', (_req, res) => {
    res.json({ faults: context.faults.settings });
  });

  router.post('/faults', (req, res) => {
    const update = parseFaultUpdate(req.body);
    if (typeof update === 'string') {
      sendError(res, 400, 'invalid_request', update);
      return;
    }
    context.faults.update(update);
    res.json({ faults: context.faults.settings });
  });
}

/** The per-client rate limits: read and changed. */
function mountRateLimits(router: express.Router, context: EmulatorContext): void {
  router.get('/rate-limits', (_req, res) => {
    res.json({ rateLimits: context.rateLimits.settings });
  });
  router.post('/rate-limits', (req, res) => {
    const update = parseRateLimitUpdate(req.body);
    if (typeof update === 'string') {
      sendError(res, 400, 'invalid_request', update);
      return;
    }
    context.rateLimits.update(update);
    res.json({ rateLimits: context.rateLimits.settings });
  });
}

/** Ends a pending session as if on the hosted page. */
function completeSession(context: EmulatorContext, req: Request<{ sessionId: string }>, res: Response): void {
  const { outcome, reason, moveEnded } = (req.body ?? {}) as {
    outcome?: unknown;
    reason?: unknown;
    moveEnded?: unknown;
  };
  if (outcome !== 'verified' && outcome !== 'failed') {
    sendError(res, 400, 'invalid_request', 'outcome must be "verified" or "failed".');
    return;
  }
  if (outcome === 'failed' && (typeof reason !== 'string' || reason === '')) {
    sendError(
      res,
      400,
      'invalid_request',
      'A failed outcome needs a reason, e.g. "otp_locked" (any string, to test unknown reasons).',
    );
    return;
  }
  if (moveEnded !== undefined && typeof moveEnded !== 'boolean') {
    sendError(res, 400, 'invalid_request', 'moveEnded must be true or false.');
    return;
  }
  const session = context.sessions.get(req.params.sessionId);
  if (session === undefined) {
    sendError(res, 404, 'unknown_session', 'No such session (or it is older than 24 h).');
    return;
  }
  const given = typeof reason === 'string' ? reason : undefined;
  if (session.status !== 'pending') {
    if (moveEnded !== true) {
      sendError(
        res,
        409,
        'session_already_ended',
        `The session already ended as ${session.status} (send moveEnded: true to move it to another end).`,
      );
      return;
    }
    context.sessions.moveEnded(session, outcome, given);
  } else context.sessions.end(session, outcome, given);
  res.json({ isSuccess: true, status: session.status, ...(session.reason ? { reason: session.reason } : {}) });
}
