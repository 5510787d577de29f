/**
 * The hosted verify page (verifyUrl = {page origin}/verify). POST /verify redeems the single-use handoff
 * (form field `hx`) and binds the browser as the session's device; POST /verify/code takes the OTP;
 * POST /verify/sms sends a code a passkey user asked for; the passkey forms are in passkey-routes.ts.
 * Every end, success or failure, answers 303 to returnUrl?session_id=…&state=… (after an accepted
 * code, once the user has taken or declined the passkey offer).
 */
import { timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { newDeviceId, setDeviceCookie } from './binding.ts';
import type { EmulatorContext } from '../context.ts';
import {
  csp,
  endedForm,
  fail,
  FORM_TYPE,
  NOT_FROM_SITE,
  pendingForm,
  returnToSite,
  sendCodePage,
  sendEnrolPage,
  sendPage,
  sendSessionPage,
  STALE,
} from './hosted-responses.ts';
import { passkeyRoutes } from '../passkeys/passkey-routes.ts';
import { OTP_MAX_ATTEMPTS } from '../api/sessions.ts';
import { sendOtpOnce } from '../sms/sms.ts';
import { forwardingRejections, sendError } from '../errors.ts';

export { returnLocation } from './hosted-responses.ts';

const formBody = express.urlencoded({ extended: false, limit: '8kb', type: FORM_TYPE, parameterLimit: 20 });

export function hostedPageRouter(context: EmulatorContext): express.Router {
  const router = express.Router({ caseSensitive: true, strict: true }); // verifyUrl's paths exactly
  router.use(pageHeadersNoQuery);
  for (const path of ['/', '/code', '/sms', '/continue', '/passkey', '/passkey/enrol']) {
    router.get(path, (_req, res) => {
      res.set('Allow', 'POST');
      sendPage(res, 405, NOT_FROM_SITE.title, NOT_FROM_SITE.message);
    });
  }
  router.post(
    '/',
    // Counted before its body is read: a post whose form is refused (too many fields, too large) is one too.
    (_req, _res, next) => {
      context.stats.verifyPosts += 1;
      next();
    },
    formBody,
    forwardingRejections((req, res) => redeemHandoff(context, req, res)),
  );
  router.post(
    '/code',
    formBody,
    forwardingRejections((req, res) => submitCode(context, req, res)),
  );
  router.post('/sms', formBody, (req, res) => {
    const checked = pendingForm(req, res, context);
    if (checked === undefined) return;
    sendOtpOnce(context, checked.session);
    sendCodePage(res, context, checked.session, checked.deviceId);
  });
  router.post('/continue', formBody, (req, res) => {
    const checked = endedForm(req, res, context);
    if (checked !== undefined) returnToSite(res, checked.session);
  });
  passkeyRoutes(router, context);
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

/**
 * Every answer on this path: no framing, no caching, no referrer, a locked-down CSP; no query string;
 * and verifyUrl exactly as returned (the mount matches /verify/ too, which no route can tell apart).
 */
function pageHeadersNoQuery(req: Request, res: Response, next: NextFunction): void {
  res.set({
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': csp(undefined, "'none'"),
  });
  // No flow value may travel in a URL on this path: any query string is refused.
  if (req.originalUrl.includes('?')) {
    sendPage(
      res,
      400,
      NOT_FROM_SITE.title,
      'This address must not carry anything after "?". Go back to the site and start again.',
    );
    return;
  }
  if (req.originalUrl === '/verify/') {
    sendError(res, 404, 'not_found', 'Not found.');
    return;
  }
  next();
}

/** POST /verify: redeems the handoff and binds this browser as the session's device. */
async function redeemHandoff(context: EmulatorContext, req: Request, res: Response): Promise<void> {
  const hx: unknown = req.is(FORM_TYPE) ? req.body?.hx : undefined;
  if (typeof hx !== 'string' || hx === '') {
    sendPage(
      res,
      400,
      NOT_FROM_SITE.title,
      'The page was not opened with a form submission carrying the verification token. Go back to the site and start again.',
    );
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
  await sendSessionPage(res, context, session, deviceId);
}

/** POST /verify/code: the OTP, compared in constant time; a wrong one uses an attempt. */
async function submitCode(context: EmulatorContext, req: Request, res: Response): Promise<void> {
  const checked = pendingForm(req, res, context);
  if (checked === undefined) return;
  const { session, deviceId } = checked;
  if (context.sessions.otpExpired(session)) return fail(res, context, session, 'otp_locked');
  if (session.otpSentAt === undefined) {
    // A passkey user who never asked for a code: nothing to compare with, no attempt used.
    const error = 'Ask for a code by SMS first, or use your passkey.';
    await sendSessionPage(res, context, session, deviceId, { status: 400, error });
    return;
  }

  const code = typeof req.body?.code === 'string' ? req.body.code.replace(/\s/g, '') : '';
  if (!/^\d{6}$/.test(code)) {
    sendCodePage(res, context, session, deviceId, { error: 'Enter the 6 digits from the SMS.' });
    return;
  }
  if (!timingSafeEqual(Buffer.from(code), Buffer.from(session.otp))) {
    session.wrongAttempts += 1;
    if (session.wrongAttempts >= OTP_MAX_ATTEMPTS) return fail(res, context, session, 'otp_locked');
    const error = 'That code is not correct. Check the SMS and try again.';
    sendCodePage(res, context, session, deviceId, { error });
    return;
  }
  context.sessions.end(session, 'verified', undefined, 'sms');
  // The outcome is final and readable now; the offer only delays the 303 (a closed tab loses nothing).
  await sendEnrolPage(res, context, session, deviceId);
}
