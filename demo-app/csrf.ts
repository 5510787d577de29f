/**
 * CSRF protection for the demo's own forms (sign-in, sign-out). The kit's start route has its own
 * check, fed by kit.csrfToken(req). Same approach: a per-session token in a hidden `_csrf` field,
 * compared in constant time, and fetch metadata refusing cross-site posts outright.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

const KEY = 'demoCsrf';

export function demoCsrfToken(req: Request): string {
  const existing = req.session.demoCsrf;
  if (typeof existing === 'string' && existing.length >= 32) return existing;
  const token = randomBytes(32).toString('base64url');
  req.session[KEY] = token;
  return token;
}

function sha(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** True when the POST carries this session's token and was not sent by another site. */
export function demoCsrfValid(req: Request): boolean {
  if (req.get('sec-fetch-site')?.toLowerCase() === 'cross-site') return false;
  const expected = req.session.demoCsrf;
  const given = (req.body as Record<string, unknown> | undefined)?._csrf;
  if (typeof expected !== 'string' || typeof given !== 'string') return false;
  return given.length === expected.length && timingSafeEqual(sha(given), sha(expected));
}
