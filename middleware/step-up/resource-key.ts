/**
 * The resource key as grants and kept requests are bound to it. `bindTo` reads it from the request
 * (a path segment, a field), so it may be any length, and PostgreSQL's index on the grants holds
 * at most about 2.7 KB a row: a long key is bound by its digest instead, on every store alike.
 */
import { createHash } from 'node:crypto';

/** A key longer than this is bound by its digest (at most 768 bytes as UTF-8: well inside the index). */
export const RESOURCE_KEY_MAX_LENGTH = 256;
const DIGEST_PREFIX = 'sha256:';

/**
 * The key itself, or `sha256:<digest>` for a long one. A short key already spelt `sha256:...` is
 * digested too, so no key of the app's can pass for another one's digest.
 */
export function boundResourceKey(key: string): string {
  if (key.length <= RESOURCE_KEY_MAX_LENGTH && !key.startsWith(DIGEST_PREFIX)) return key;
  return `${DIGEST_PREFIX}${createHash('sha256').update(key).digest('base64url')}`;
}
