/**
 * The headers of what a guarded route serves once the guard lets it through (a page opened with a
 * fresh grant, the answer to a kept form confirmed): the content the step-up protects, set before
 * the app's handler runs, which may still set its own.
 */
import type { Response } from 'express';

export function markGuardedAnswer(res: Response): void {
  // No browser history or shared cache keeps it past the grant (Back after a sign-out).
  res.setHeader('Cache-Control', 'no-store');
  // No other site (a sibling subdomain's page sends the user's cookies) frames it for a click that
  // rides the grant; an app's own framing policy, set before the guard, stands.
  if (res.getHeader('X-Frame-Options') === undefined) res.setHeader('X-Frame-Options', 'SAMEORIGIN');
}
