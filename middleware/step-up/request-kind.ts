/**
 * What a request to a guarded route is: its method as Express routes it, a page or a form, a
 * browser's navigation or a script's, and whether this site or another one sent it.
 */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { verifySameSite } from '../routes/csrf.ts';

/**
 * The request's method as Express routes it: case-insensitively. A hand-written method override
 * (`req.method = req.body._method`) can leave `delete` or `get`, which `app.delete` and `app.get`
 * match, or a list, when a form names `_method` twice: that names no method, so nothing runs.
 */
export function methodOf(req: Request): string {
  const method: unknown = req.method;
  if (typeof method !== 'string') {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'This request names its method more than once or as a list (a form’s _method sent twice); nothing was kept or run.',
    );
  }
  return method.toUpperCase();
}

/** A page, which the guard answers with "Confirm it's you"; every other method is a form's, or refused. */
export function isPageMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/**
 * JSON for all but a browser's navigation (a link, a form), which asks for HTML first: a script's
 * fetch asks for any type and would read a page answered 200 as the resource served. No Accept at
 * all states no preference: the page. (Not Sec-Fetch-Mode: Node's fetch, under test browsers, says `cors`.)
 */
export function wantsJson(req: Request): boolean {
  const navigation = req.get('accept') === undefined || req.accepts()[0] === 'text/html';
  return !navigation || req.is('application/json') === 'application/json';
}

/**
 * Whether the browser may have sent it as a POST: any method but GET and HEAD, unless
 * `originalMethod` says it was sent otherwise (a hand-written override, `req.method =
 * req.body._method`, keeps none).
 */
function mayBeSentAsPost(req: Request): boolean {
  const { originalMethod } = req as Request & { originalMethod?: string };
  return !isPageMethod(methodOf(req)) && (originalMethod === undefined || originalMethod.toUpperCase() === 'POST');
}

/** The methods a form sends, itself or through a method override. */
const FORM_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * A request from a browser's form: a POST, or another method a form reached through an override
 * (one that kept no `originalMethod` too, for the methods an override is for).
 */
function isFormRequest(req: Request): boolean {
  const { originalMethod } = req as Request & { originalMethod?: string };
  return mayBeSentAsPost(req) && (originalMethod !== undefined || FORM_METHODS.includes(methodOf(req)));
}

/** The body types a form can send, which another site's script may send too without a CORS preflight. */
const FORM_BODY_TYPES = ['', 'application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/**
 * A script's request that needed no CORS preflight: a POST with a form's body type. Any other site
 * can send one with the user's cookies and any `Accept`, so only its Origin or fetch metadata
 * can show it came from this site. (A JSON body, or a PUT or DELETE, is preflighted.)
 */
function isSimpleScriptPost(req: Request): boolean {
  const type = (req.get('content-type') ?? '').split(';', 1)[0] ?? '';
  return mayBeSentAsPost(req) && FORM_BODY_TYPES.includes(type.trim().toLowerCase());
}

/**
 * Stricter than verifySameSite, for a form the guard keeps: that lets a missing or `null` Origin
 * through because the start route checks a token next, but a kept form has none, and the
 * confirmation's fresh one would carry another site's fields. Fetch metadata must vouch for it.
 */
function verifyKeptFormOrigin(req: Request): void {
  const origin = req.get('origin');
  if (origin !== undefined && origin !== 'null') return;
  if (req.get('sec-fetch-site')?.toLowerCase() === 'same-origin') return;
  throw new KitError(
    KitErrorCode.CsrfFailed,
    `A form with ${origin === undefined ? 'no Origin' : 'Origin: null'} and no Sec-Fetch-Site: same-origin was refused: nothing shows it came from this site.`,
  );
}

/**
 * A request that may change something (any method but GET and HEAD) must come from this site's
 * own pages, whether it is kept for a confirmation or runs on a fresh grant: a grant proves who
 * the user is, not that this site sent the request.
 */
export function verifyFromThisSite<Tx>(context: KitContext<Tx>, req: Request): void {
  verifySameSite(context, req);
  if (wantsJson(req)) {
    if (isSimpleScriptPost(req)) verifyKeptFormOrigin(req);
    return;
  }
  if (!isFormRequest(req)) {
    throw new KitError(KitErrorCode.InvalidActionParams, 'Send this request from a form, or as JSON.');
  }
  verifyKeptFormOrigin(req);
}

/**
 * A request another site started (a link, a redirect, a script): Sec-Fetch-Site says so. It may be
 * one of many an attacker's page fires, so the guard keeps nothing for it.
 */
export function isFromElsewhere(req: Request): boolean {
  const site = req.get('sec-fetch-site')?.toLowerCase();
  return site === 'cross-site' || site === 'same-site';
}

/**
 * A page request another site started (isFromElsewhere): true for a navigation, which keeps
 * nothing. A script's request is refused unless an Origin this app allows vouches for it (a CORS
 * fetch names one): an image or a script tag on a sibling subdomain names none, and it may be one
 * of many that page fires. False when neither (a page from this site).
 */
export function isNavigationFromElsewhere<Tx>(context: KitContext<Tx>, req: Request): boolean {
  if (!isFromElsewhere(req)) return false;
  if (!wantsJson(req)) return true;
  verifySameSite(context, req);
  const origin = req.get('origin');
  if (origin !== undefined && origin !== 'null') return false;
  throw new KitError(
    KitErrorCode.CsrfFailed,
    `A request from another site with ${origin === undefined ? 'no Origin' : 'Origin: null'} was refused: nothing shows this site asked for it.`,
  );
}
