/**
 * CSRF defence for the start route.
 *
 * 1. Fetch metadata and origin: `Sec-Fetch-Site: cross-site` is refused, and so is an `Origin`
 *    header naming any origin but the app's (the returnUrl's origin, plus `csrf.allowedOrigins`).
 * 2. Web: a synchronizer token kept in `req.session` (express-session), handed to the
 *    integrator's forms by `kit.csrfToken(req)` and compared in constant time. An app with its own
 *    CSRF defence may replace this step only (`csrf.dangerouslyReplaceTokenCheck`).
 *    Mobile: the request must be `application/json`, which a cross-site page cannot send without
 *    a CORS preflight (native apps hold no session token to read).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import { withHookDeadline } from './hook-deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { mayBePhoneNumber, NOT_REPEATED } from '../numbers/mask-number.ts';

type SessionBag = Record<string, unknown>;

function sessionOf(req: Request, purpose: string): SessionBag {
  const session = (req as Request & { session?: unknown }).session;
  if (typeof session !== 'object' || session === null) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `${purpose} needs a session: mount express-session (app.use(session({...}))) before the verification kit, or supply csrf.dangerouslyReplaceTokenCheck.`,
    );
  }
  return session as unknown as SessionBag;
}

/** The current session's token, created on first use. Put it in a hidden `_csrf` field. */
export function csrfToken(context: Pick<KitContext, 'csrf'>, req: Request): string {
  const session = sessionOf(req, 'kit.csrfToken(req)');
  const existing = session[context.csrf.sessionKey];
  if (typeof existing === 'string' && existing.length >= 32) return existing;
  const token = randomBytes(32).toString('base64url');
  session[context.csrf.sessionKey] = token;
  return token;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b)) && a.length === b.length;
}

function refuse(message: string): never {
  throw new KitError(KitErrorCode.CsrfFailed, message);
}

/**
 * Throws KitError csrf_failed when the request came from another site (fetch metadata, Origin):
 * the part of the defence that needs no token, for forms the kit did not draw.
 */
export function verifySameSite(context: Pick<KitContext, 'csrf' | 'returnOrigin'>, req: Request): void {
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site.toLowerCase() === 'cross-site') {
    refuse('This request came from another site and was refused. Start the verification from this site.');
  }
  const origin = req.get('origin');
  // Browsers send `Origin: null` for a same-origin form under `Referrer-Policy: no-referrer`
  // (helmet's default): it says nothing either way, so the token and fetch metadata decide.
  if (origin === undefined || origin === 'null') return;
  if (origin !== context.returnOrigin && !context.csrf.allowedOrigins.includes(origin)) refuseOrigin(context, origin);
}

/**
 * The log names both origins: the usual cause is one app reached under two names (127.0.0.1 and
 * localhost, or an instance's own port instead of the shared address).
 */
function refuseOrigin(context: Pick<KitContext, 'csrf' | 'returnOrigin'>, origin: string): never {
  const expected = [context.returnOrigin ?? '(none: mobile)', ...context.csrf.allowedOrigins];
  const quoted = quotedOrigin(origin.slice(0, 200));
  refuse(
    `This request came from another origin and was refused: its Origin ${quoted} is not this app's origin ` +
      `${JSON.stringify(context.returnOrigin)} (the returnUrl's)${expected.length > 1 ? ` or one of csrf.allowedOrigins (${expected.slice(1).join(', ')})` : ''}. ` +
      `Open the app at ${expected[0]}, the returnUrl's origin, or list ${quoted} in csrf.allowedOrigins.`,
  );
}

/**
 * The sender's Origin, quoted unless it may hold a number: an origin is judged by its host (an IP
 * address with a port holds as many digits as a number), anything else it says whole.
 */
function quotedOrigin(origin: string): string {
  let judged = origin;
  try {
    const url = new URL(origin);
    if (url.origin === origin) judged = url.hostname;
  } catch {
    // No URL: judged whole.
  }
  return mayBePhoneNumber(judged) ? NOT_REPEATED : JSON.stringify(origin);
}

function submittedToken(req: Request): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  const field = body !== undefined && body !== null && typeof body === 'object' ? body._csrf : undefined;
  const header = req.get('x-csrf-token');
  if (field !== undefined && header !== undefined) return undefined; // ambiguous: refuse
  const token = field ?? header;
  return typeof token === 'string' ? token : undefined;
}

/** Throws KitError csrf_failed (403) unless the request may start a verification. */
export async function verifyCsrf<Tx>(context: KitContext<Tx>, req: Request): Promise<void> {
  verifySameSite(context, req);
  if (context.csrf.dangerouslyReplaceTokenCheck !== undefined) {
    const check = context.csrf.dangerouslyReplaceTokenCheck;
    if ((await withHookDeadline(context, 'csrfCheck', () => check(req))) !== true)
      refuse('The form could not be verified; reload the page and try again.');
    return;
  }
  if (context.platform === 'mobile') {
    if (!req.is('application/json')) refuse('Send this request as application/json.');
    return;
  }
  const session = sessionOf(req, "The start route's CSRF check");
  const expected = session[context.csrf.sessionKey];
  const given = submittedToken(req);
  if (typeof expected !== 'string' || expected.length < 32 || given === undefined || !safeEqual(given, expected)) {
    refuse('The form has expired or was not sent from this site; reload the page and try again.');
  }
}
