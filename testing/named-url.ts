import { redactSecretFragments } from '../middleware/errors.ts';

/**
 * A URL as the testing helpers' and the audit's errors name it: its origin and path. The query is
 * left out (a landing's carries a test attempt's state and session_id, other pages a handoff or a
 * token), and so is a password; a client secret of a kit of this process in the path is redacted,
 * in any spelling (an app redirecting to a page named by it is what the audit's leak.secret finds).
 */
export function namedUrl(url: URL | string): string {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    return redactSecretFragments(`${parsed.origin}${parsed.pathname}`);
  } catch {
    // Not a URL at all: nothing of it is quoted.
    return 'a URL that cannot be read';
  }
}
