/**
 * A guarded request kept server-side while its user verifies: a page's path to return to, or a
 * form's fields to run once confirmed, within the user's limit of kept requests.
 */
import type { Request } from 'express';
import { isSafeSuccessPath } from '../options/options-actions.ts';
import { newState } from '../routes/state.ts';
import { note, type Guarded } from './guard-note.ts';
import { unconfirmable } from './guard-request.ts';
import { keepInPlaceOf, keepIntentWithinLimit, keepPageWithinLimit, replacedUnusable } from './intent-limit.ts';
import { keptFields } from './kept-fields.ts';
import { methodOf } from './request-kind.ts';
import { browserSessionOf, INTENT_TTL_MS } from './scope-actions.ts';

/** Keeps the guarded request server-side: where to return (a page), or the form to run once confirmed. */
export async function keepIntent<Tx>(
  guarded: Guarded<Tx>,
  req: Request,
  userRef: string,
  resourceKey: string,
  asScopePage: boolean,
  replaces?: string,
): Promise<string> {
  if (!asScopePage && !isSafeSuccessPath(req.originalUrl)) {
    throw unconfirmable();
  }
  const { context, guard } = guarded;
  const now = context.now();
  const kept = {
    userRef,
    scope: guard.scope.name,
    browserSession: browserSessionOf(req),
    resourceKey,
    // A JSON request is retried by its app: the user comes back to the scope's page instead.
    method: asScopePage || methodOf(req) === 'HEAD' ? 'GET' : methodOf(req),
    path: asScopePage ? (guard.scope.successPath ?? '/') : req.originalUrl,
    expiresAt: now + INTENT_TTL_MS,
  };
  const intentId = newState();
  const intent = { ...kept, intentId, fields: asScopePage ? {} : keptFields(req), createdAt: now };
  // A page asked again (reloads, a link opened twice) keeps its one intent: no row per request.
  if (kept.method === 'GET') return keepPageWithinLimit(guard.stepUp, intent);
  if (replaces === undefined) await keepIntentWithinLimit(guard.stepUp, intent);
  // A kept request asked for again moves to its new intent: the old one must never run as well.
  else if (!(await keepInPlaceOf(guard.stepUp, intent, replaces))) {
    note(guarded, req, 'denied');
    throw await replacedUnusable(guard.stepUp, replaces);
  }
  return intentId;
}
