/**
 * The hosted verify page (verifyUrl = {origin}/verify). POST /verify redeems the single-use handoff
 * (form field `hx`) and binds the browser as the session's device; POST /verify/code takes the OTP.
 * Every end, success or failure, answers 303 to returnUrl?session_id=…&state=….
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { bindingMatches, deviceIdOf, newDeviceId, pageBinding, parsePageBinding, setDeviceCookie } from './binding.ts';
import { schemeOf } from './config.ts';
import type { EmulatorContext } from './context.ts';
import { OTP_MAX_ATTEMPTS, type Session } from './sessions.ts';
import { codePage, maskPhone, messagePage } from './views.ts';

const FORM_TYPE = 'application/x-www-form-urlencoded';
const formBody = express.urlencoded({ extended: false, limit: '8kb', type: FORM_TYPE, parameterLimit: 20 });

const STALE = {
  title: 'This link was already used or has expired',
  message: 'For your security each verification link works once and only for a short time. Go back to the site and start again.',
};
const NOT_FROM_SITE = {
  title: 'Open this page from the site',
  message: 'This verification page can only be opened by the site that asked you to verify. Go back to the site and start again.',
};

export function hostedPageRouter(context: EmulatorContext): express.Router {
  const router = express.Router();

  router.use((req, res, next) => {
    res.set({
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': csp(undefined, "'none'"),
    });
    // No flow value may travel in a URL on this path: any query string is refused.
    if (req.originalUrl.includes('?')) {
      sendPage(res, 400, NOT_FROM_SITE.title, 'This address must not carry anything after "?". Go back to the site and start again.');
      return;
    }
    next();
  });

  for (const path of ['/', '/code']) {
    router.get(path, (_req, res) => {
      res.set('Allow', 'POST');
      sendPage(res, 405, NOT_FROM_SITE.title, NOT_FROM_SITE.message);
    });
  }

  router.post('/', formBody, (req, res) => {
    context.stats.verifyPosts += 1;
    const hx: unknown = req.is(FORM_TYPE) ? req.body?.hx : undefined;
    if (typeof hx !== 'string' || hx === '') {
      sendPage(res, 400, NOT_FROM_SITE.title, 'The page was not opened with a form submission carrying the verification token. Go back to the site and start again.');
      return;
    }
    // A fresh device id per redemption: this cross-site POST carries no SameSite=Lax cookie anyway.
    const deviceId = newDeviceId();
    const redemption = context.sessions.redeemHandoff(hx, deviceId);
    if (!redemption.ok) {
      sendPage(res, 400, STALE.title, STALE.message);
      return;
    }
    const { session } = redemption;
    setDeviceCookie(res, session.id, deviceId);
    if (session.status !== 'pending') {
      returnToSite(res, session);
      return;
    }
    sendCodePage(res, context, session, deviceId);
  });

  router.post('/code', formBody, (req, res) => {
    const parsed = req.is(FORM_TYPE) ? parsePageBinding(req.body?.page_binding) : undefined;
    const session = parsed === undefined ? undefined : context.sessions.get(parsed.sessionId);
    if (parsed === undefined || session?.deviceId === undefined) {
      sendPage(res, 400, STALE.title, STALE.message);
      return;
    }
    const deviceId = deviceIdOf(req, session.id);
    if (session.status !== 'pending') {
      // Back button or double submit from the same browser: the flow has ended, send it home again.
      if (deviceId === session.deviceId) returnToSite(res, session);
      else sendPage(res, 400, 'This verification has already ended', 'Go back to the site and start again.');
      return;
    }
    if (deviceId !== session.deviceId) return fail(res, context, session, 'device_changed');
    if (!bindingMatches(context.bindingKey, session.id, deviceId, parsed.mac)) return fail(res, context, session, 'session_binding_failed');
    if (context.sessions.otpExpired(session)) return fail(res, context, session, 'otp_locked');

    const code = typeof req.body?.code === 'string' ? req.body.code.replace(/\s/g, '') : '';
    if (!/^\d{6}$/.test(code)) {
      sendCodePage(res, context, session, deviceId, 'Enter the 6 digits from the SMS.');
      return;
    }
    if (!timingSafeEqual(Buffer.from(code), Buffer.from(session.otp))) {
      session.wrongAttempts += 1;
      if (session.wrongAttempts >= OTP_MAX_ATTEMPTS) return fail(res, context, session, 'otp_locked');
      sendCodePage(res, context, session, deviceId, 'That code is not correct. Check the SMS and try again.');
      return;
    }
    context.sessions.end(session, 'verified');
    returnToSite(res, session);
  });

  // Malformed or oversized form bodies are "not a form submission": 400 with the friendly page.
  router.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      sendPage(res, 400, NOT_FROM_SITE.title, NOT_FROM_SITE.message);
      return;
    }
    next(error);
  });
  return router;
}

function fail(res: Response, context: EmulatorContext, session: Session, reason: string): void {
  context.sessions.end(session, 'failed', reason);
  returnToSite(res, session);
}

/** The registered URL (or deep link) plus session_id and state, each encoded. */
export function returnLocation(session: Session): string {
  return `${session.returnUrl}?session_id=${encodeURIComponent(session.id)}&state=${encodeURIComponent(session.state)}`;
}

function returnToSite(res: Response, session: Session): void {
  res.redirect(303, returnLocation(session));
}

// The code form's redirect goes to the return URL, and Chrome checks form-action on redirects too.
function returnTarget(returnUrl: string): string {
  const scheme = schemeOf(returnUrl);
  return scheme === 'http' || scheme === 'https' ? new URL(returnUrl).origin : `${scheme}:`;
}

function csp(nonce: string | undefined, formAction: string): string {
  const style = nonce === undefined ? '' : ` style-src 'nonce-${nonce}';`;
  return `default-src 'none';${style} form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

function sendPage(res: Response, status: number, title: string, message: string): void {
  const nonce = randomBytes(16).toString('base64');
  res.set('Content-Security-Policy', csp(nonce, "'none'"));
  res.status(status).type('html').send(messagePage(nonce, title, message));
}

function sendCodePage(res: Response, context: EmulatorContext, session: Session, deviceId: string, error?: string): void {
  const nonce = randomBytes(16).toString('base64');
  res.set('Content-Security-Policy', csp(nonce, `'self' ${returnTarget(session.returnUrl)}`));
  res.status(200).type('html').send(
    codePage({
      nonce,
      maskedPhone: maskPhone(session.destination),
      binding: pageBinding(context.bindingKey, session.id, deviceId),
      attemptsLeft: OTP_MAX_ATTEMPTS - session.wrongAttempts,
      sensitive: session.operationSensitivity === 'sensitive',
      error,
    }),
  );
}
