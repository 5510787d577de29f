/**
 * What the hosted page answers: its pages (each with its own CSP nonce), the 303 back to the site,
 * and the checks every form posted from a hosted page passes (page binding, device cookie).
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { bindingMatches, deviceIdOf, pageBinding, parsePageBinding } from './binding.ts';
import { schemeOf } from '../config/config.ts';
import type { EmulatorContext } from '../context.ts';
import { enrolPage, passkeyPage } from '../passkeys/passkey-views.ts';
import { enrolmentOptions, verificationOptions } from '../passkeys/passkeys.ts';
import { OTP_MAX_ATTEMPTS, type Session } from '../api/sessions.ts';
import { sendOtpOnce } from '../sms/sms.ts';
import { codePage, maskPhone, messagePage } from './views.ts';

export const FORM_TYPE = 'application/x-www-form-urlencoded';

export const STALE = {
  title: 'This link was already used or has expired',
  message:
    'For your security each verification link works once and only for a short time. ' +
    'Go back to the site and start again.',
};
export const NOT_FROM_SITE = {
  title: 'Open this page from the site',
  message:
    'This verification page can only be opened by the site that asked you to verify. ' +
    'Go back to the site and start again.',
};
const ENDED = { title: 'This verification has already ended', message: 'Go back to the site and start again.' };

/** The registered URL (or deep link) plus session_id and state, each encoded. */
export function returnLocation(session: Session): string {
  return `${session.returnUrl}?session_id=${encodeURIComponent(session.id)}&state=${encodeURIComponent(session.state)}`;
}

export function returnToSite(res: Response, session: Session): void {
  res.redirect(303, returnLocation(session));
}

export function fail(res: Response, context: EmulatorContext, session: Session, reason: string): void {
  context.sessions.end(session, 'failed', reason);
  returnToSite(res, session);
}

// The forms' redirect goes to the return URL, and Chrome checks form-action on redirects too.
function returnTarget(returnUrl: string): string {
  const scheme = schemeOf(returnUrl);
  return scheme === 'http' || scheme === 'https' ? new URL(returnUrl).origin : `${scheme}:`;
}

export function csp(nonce: string | undefined, formAction: string, withScript = false): string {
  const style = nonce === undefined ? '' : ` style-src 'nonce-${nonce}';`;
  const script = nonce !== undefined && withScript ? ` script-src 'nonce-${nonce}';` : '';
  return `default-src 'none';${style}${script} form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

export function sendPage(res: Response, status: number, title: string, message: string): void {
  const nonce = randomBytes(16).toString('base64');
  res.set('Content-Security-Policy', csp(nonce, "'none'"));
  res
    .status(status)
    .type('html')
    .send(messagePage(nonce, title, message));
}

interface PageOptions {
  status?: number;
  error?: string;
}

/** Sends a page whose forms post to the hosted page and may end in a 303 to the site. */
function sendFormPage(
  res: Response,
  session: Session,
  status: number,
  render: (nonce: string) => string,
  withScript = false,
): void {
  const nonce = randomBytes(16).toString('base64');
  res.set('Content-Security-Policy', csp(nonce, `'self' ${returnTarget(session.returnUrl)}`, withScript));
  res.status(status).type('html').send(render(nonce));
}

export function sendCodePage(
  res: Response,
  context: EmulatorContext,
  session: Session,
  deviceId: string,
  options: PageOptions = {},
): void {
  sendFormPage(res, session, options.status ?? 200, (nonce) =>
    codePage({
      nonce,
      maskedPhone: maskPhone(session.destination),
      binding: pageBinding(context.bindingKey, session.id, deviceId),
      attemptsLeft: OTP_MAX_ATTEMPTS - session.wrongAttempts,
      sensitive: session.operationSensitivity === 'sensitive',
      error: options.error,
    }),
  );
}

/** "Use your passkey" with a fresh single-use challenge; false (nothing sent) when the userRef has none. */
export async function sendPasskeyPage(
  res: Response,
  context: EmulatorContext,
  session: Session,
  deviceId: string,
  options: PageOptions = {},
): Promise<boolean> {
  const passkeys = context.passkeys.list(session.clientId, session.userRef);
  if (context.relyingParty === undefined || passkeys.length === 0) return false;
  const publicKey = await verificationOptions(context.relyingParty, passkeys);
  context.sessions.issueChallenge(session, 'verify', publicKey.challenge);
  const binding = pageBinding(context.bindingKey, session.id, deviceId);
  const render = (nonce: string) =>
    passkeyPage({
      nonce,
      binding,
      options: publicKey,
      maskedPhone: maskPhone(session.destination),
      smsSent: session.otpSentAt !== undefined,
      sensitive: session.operationSensitivity === 'sensitive',
      error: options.error,
    });
  sendFormPage(res, session, options.status ?? 200, render, true);
  return true;
}

/** The enrolment offer after an accepted code, with a fresh single-use challenge. */
export async function sendEnrolPage(
  res: Response,
  context: EmulatorContext,
  session: Session,
  deviceId: string,
  options: PageOptions = {},
): Promise<void> {
  const rp = context.relyingParty;
  if (rp === undefined) {
    returnToSite(res, session);
    return;
  }
  const displayName = maskPhone(session.destination);
  const owner = { clientId: session.clientId, userRef: session.userRef, displayName };
  const publicKey = await enrolmentOptions(rp, context.passkeys, owner);
  context.sessions.issueChallenge(session, 'enrol', publicKey.challenge);
  const binding = pageBinding(context.bindingKey, session.id, deviceId);
  const render = (nonce: string) => enrolPage({ nonce, binding, options: publicKey, error: options.error });
  sendFormPage(res, session, options.status ?? 200, render, true);
}

/**
 * What a pending session's page shows: the passkey choice when its client and userRef have a
 * passkey, otherwise the code page (sending the SMS now if it was deferred).
 */
export async function sendSessionPage(
  res: Response,
  context: EmulatorContext,
  session: Session,
  deviceId: string,
  options: PageOptions = {},
): Promise<void> {
  if (await sendPasskeyPage(res, context, session, deviceId, options)) return;
  sendOtpOnce(context, session);
  sendCodePage(res, context, session, deviceId, options);
}

export interface PostedForm {
  session: Session;
  /** The session's device cookie as this browser sent it (undefined without one). */
  deviceId: string | undefined;
  /** The page_binding's MAC, still to be checked against deviceId. */
  mac: string;
}

export interface CheckedForm {
  session: Session;
  deviceId: string;
}

/** The session a hosted-page form names in page_binding; answers 400 itself when there is none. */
export function postedForm(req: Request, res: Response, context: EmulatorContext): PostedForm | undefined {
  const parsed = req.is(FORM_TYPE) ? parsePageBinding(req.body?.page_binding) : undefined;
  const session = parsed === undefined ? undefined : context.sessions.get(parsed.sessionId);
  if (parsed === undefined || session?.deviceId === undefined) {
    // Unknown session, or one whose handoff was never redeemed: nothing may act on it from a page.
    sendPage(res, 400, STALE.title, STALE.message);
    return undefined;
  }
  return { session, deviceId: deviceIdOf(req, session.id), mac: parsed.mac };
}

/**
 * The checks of the code form, for every form of a pending session: an ended session sends its
 * own browser home again; another device fails it as device_changed, a forged binding as
 * session_binding_failed. Answers itself and returns undefined unless all pass.
 */
export function pendingForm(req: Request, res: Response, context: EmulatorContext): CheckedForm | undefined {
  const posted = postedForm(req, res, context);
  if (posted === undefined) return undefined;
  const { session, deviceId, mac } = posted;
  if (session.status !== 'pending') {
    // Back button or double submit from the same browser: the flow has ended, send it home again.
    if (deviceId === session.deviceId) returnToSite(res, session);
    else sendPage(res, 400, ENDED.title, ENDED.message);
    return undefined;
  }
  if (deviceId === undefined || deviceId !== session.deviceId) {
    fail(res, context, session, 'device_changed');
    return undefined;
  }
  if (!bindingMatches(context.bindingKey, session.id, deviceId, mac)) {
    fail(res, context, session, 'session_binding_failed');
    return undefined;
  }
  return { session, deviceId };
}

/** For the forms shown after the end (continue, enrol): only the browser that finished it, with its binding. */
export function endedForm(req: Request, res: Response, context: EmulatorContext): CheckedForm | undefined {
  const posted = postedForm(req, res, context);
  if (posted === undefined) return undefined;
  const { session, deviceId, mac } = posted;
  const sameDevice = deviceId !== undefined && deviceId === session.deviceId;
  const sameBrowser = sameDevice && bindingMatches(context.bindingKey, session.id, deviceId, mac);
  if (session.status === 'pending' || !sameBrowser) {
    // Nothing changes: a pending session is finished only by its code or passkey, an ended one stays ended.
    if (session.status === 'pending') {
      sendPage(res, 400, 'Finish the verification first', 'Go back to the verification page and finish it there.');
    } else sendPage(res, 400, ENDED.title, ENDED.message);
    return undefined;
  }
  return { session, deviceId };
}
