/**
 * A step-up guard's answer to a request without a fresh grant: "Confirm it's you" to a navigation
 * (its request kept first), the 401 challenge to a script, or, to a page another site linked to,
 * a link that opens it from this site.
 */
import type { Request, Response } from 'express';
import { maskDestination } from '../attempts.ts';
import { isSafeSuccessPath } from '../options/options-actions.ts';
import { sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { stepUpFromElsewherePage, stepUpRequiredPage } from '../pages/step-up-pages.ts';
import { readStoredNumber } from '../numbers/parse-number.ts';
import { csrfToken } from '../routes/csrf.ts';
import { newNonce } from '../routes/state.ts';
import { note, type Guarded } from './guard-note.ts';
import { readingOf, unconfirmable } from './guard-request.ts';
import { keepIntent } from './keep-intent.ts';
import { labelFor } from './labels.ts';
import { wantsJson } from './request-kind.ts';
import { browserSessionOf } from './scope-actions.ts';
import { sessionGrants, type GrantFilter, type GrantReading } from './session-grants.ts';
import type { StepUpGrant } from '../store/types.ts';

/** A user back from a verification within this long, still refused, is told why instead of asked again. */
const JUST_GRANTED_MS = 2 * 60_000;

/** 401 with a challenge in the spirit of RFC 9470: the app runs the flow (with `intent`) and retries. */
function answerJsonChallenge<Tx>({ context, guard }: Guarded<Tx>, res: Response, intentId: string): void {
  setNoStoreHeaders(res);
  res.setHeader(
    'WWW-Authenticate',
    `VerifyKit error="insufficient_user_authentication", scope="${guard.scope.name}", max_age="${guard.maxAgeSeconds}"`,
  );
  res.status(401).json({
    error: 'verification_required',
    scope: guard.scope.name,
    maxAge: guard.maxAgeSeconds,
    start: context.routes.start,
    intent: intentId,
  });
}

/**
 * The session's grants started by `now`: one started later (on a clock ahead of this one's) opens
 * nothing yet, and is neither too old nor for another resource.
 */
async function startedGrants(reading: GrantReading, filter: GrantFilter, now: number): Promise<StepUpGrant[]> {
  return (await sessionGrants(reading, filter)).filter((grant) => grant.startedAt <= now);
}

/** Why a user just back from a verification is still refused (its grant too old, or for another resource), if they are. */
async function explanationOf(
  reading: GrantReading,
  resourceKey: string,
  now: number,
): Promise<'tooOld' | 'otherResource' | undefined> {
  const [justGranted] = await startedGrants(reading, { grantedSince: now - JUST_GRANTED_MS }, now);
  if (justGranted === undefined) return undefined;
  return justGranted.resourceKey === resourceKey ? 'tooOld' : 'otherResource';
}

export async function answerRequired<Tx>(
  guarded: Guarded<Tx>,
  req: Request,
  res: Response,
  user: { userRef: string; destination: string },
  resourceKey: string,
  replaces?: string,
): Promise<void> {
  const { context, guard } = guarded;
  const json = wantsJson(req);
  const reading = readingOf(guarded, user.userRef, browserSessionOf(req));
  // Read before anything is kept (the grants, the integrator's texts): a read that fails then
  // leaves a kept form as it was, not used up for a new one nobody is shown.
  const now = context.now();
  const tooOld = await startedGrants(reading, { resourceKey }, now);
  const explanation = json ? undefined : await explanationOf(reading, resourceKey, now);
  const messages = context.messages.forRequest(req);
  const label = json ? undefined : labelFor(guard.scope, messages.lang, context.logger);
  // The number as the start will text it (read once, as the policy judges it), not as stored.
  const maskedNumber = json ? '' : maskDestination(readStoredNumber(user.destination).e164);
  // A kept form asked again stays the form it is, whoever asks (a script too): its fields are the
  // user's request, and no app holds them to send again.
  const intentId = await keepIntent(guarded, req, user.userRef, resourceKey, json && replaces === undefined, replaces);
  note(guarded, req, tooOld.length > 0 ? 'expired' : 'required');
  if (json) {
    answerJsonChallenge(guarded, res, intentId);
    return;
  }
  const nonce = newNonce();
  const page = stepUpRequiredPage(
    {
      startPath: context.routes.start as string,
      csrfToken: csrfToken(context, req),
      scope: guard.scope.name,
      intentId,
      maskedNumber,
      label,
      explanation,
    },
    nonce,
    messages,
  );
  sendPage(res, explanation === undefined ? 200 : 403, page, nonce);
}

/**
 * A page another site sent the user to: nothing is kept (another site could fill the user's kept
 * requests with links), and one link opens the same page from this site, where the guard asks as usual.
 */
export function answerFromElsewhere<Tx>(guarded: Guarded<Tx>, req: Request, res: Response): void {
  if (!isSafeSuccessPath(req.originalUrl)) {
    throw unconfirmable();
  }
  note(guarded, req, 'required');
  const messages = guarded.context.messages.forRequest(req);
  const nonce = newNonce();
  const label = labelFor(guarded.guard.scope, messages.lang, guarded.context.logger);
  sendPage(res, 200, stepUpFromElsewherePage({ label }, nonce, messages), nonce);
}
