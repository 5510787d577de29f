/**
 * The headers every kit page carries: `no-store` and `no-referrer`, so neither a handoff nor a
 * return URL's query is kept in a cache or leaked in a Referer, and a per-response nonce in the
 * page's own Content-Security-Policy for its only scripts.
 */
import { randomBytes } from 'node:crypto';
import type { Response } from 'express';

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

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
  res.vary('Accept-Language');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; ` +
      `form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.status(status).type('html').send(body);
}
