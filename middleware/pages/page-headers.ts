/**
 * The headers every kit page carries: `no-store` and `no-referrer`, so neither a handoff nor a
 * return URL's query is kept in a cache or leaked in a Referer, and a per-response nonce in the
 * page's own Content-Security-Policy for its only scripts (the route makes the nonce: routes/state.ts).
 */
import type { Response } from 'express';

/** Headers every kit response carrying a flow value or a result gets. */
export function setNoStoreHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/**
 * Sends one of the kit's pages with its own CSP (overriding helmet's) and no-store headers.
 * `connect-src 'self'` lets the pending page's script re-check the landing; nothing else connects.
 */
export function sendPage(res: Response, status: number, body: string, nonce: string, formAction = "'self'"): void {
  setNoStoreHeaders(res);
  // res.vary parses and rebuilds the header; with none set yet, the result is just this value.
  if (res.getHeader('Vary') === undefined) res.setHeader('Vary', 'Accept-Language');
  else res.vary('Accept-Language');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; ` +
      `form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('X-Frame-Options', 'DENY');
  // Written directly rather than with res.send: a no-store page is never revalidated, so the
  // SHA-1 ETag express would compute over every page (and its freshness check) is pure cost.
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/**
 * A redirect to one of the app's own paths, without a body. Express's res.redirect negotiates a
 * "Redirecting to <path>" body by Accept that browsers never show: work for nothing, and the path
 * (which may hold a phone number) repeated outside the Location. A full number appears only where
 * the user typed it.
 */
export function redirectWithoutBody(res: Response, status: 303 | 307, path: string): void {
  res.location(path);
  res.statusCode = status;
  res.setHeader('Content-Length', '0');
  res.end();
}
