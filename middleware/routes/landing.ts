/**
 * The landing (GET at the returnUrl's path). Arrival proves nothing: the session_id and state are
 * read on the server, the attempt is resolved by state, and the one fulfil path re-reads the
 * outcome. Only then does the signed-in user matter, and only for what the page shows: the
 * attempt's own user is sent (303) to the action's server-side successPath or shown the failure;
 * anyone else sees a neutral page without details.
 */
import type { Request, Response } from 'express';
import type { KitContext } from '../context.ts';
import type { Completion } from '../fulfil/fulfil.ts';
import { redirectWithoutBody, sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { newNonce } from './state.ts';
import type { KitMessages } from '../pages/messages.ts';
import { BACKGROUND_CHECK_HEADER, PENDING_HEADER, pendingScript, type PendingPage } from '../pages/pages.ts';
import { completeReturn, isLateCommit, queryOf, readReturnedIds } from './complete-return.ts';
import type { Attempt } from '../store/types.ts';
import { currentUser, renewSessionIfDestroyed } from './user.ts';
import { restartFormFor } from './restart-form.ts';
import { leaveLandedFlash, rememberUnseenFirst, successPathOf, takeUnseenFirst } from './success-path.ts';

/** The landing of this attempt, with its stored (validated) identifiers: never a URL from the request. */
function ownLandingUrl(landingPath: string, attempt: Attempt): string {
  const query = new URLSearchParams({ session_id: attempt.sessionId, state: attempt.state });
  return `${landingPath}?${query.toString()}`;
}

/**
 * The pending page's context: it checks again by itself only within the refresh window; its
 * "Check again" target is the landing's own path with the stored (validated) identifiers.
 */
function pendingPage<Tx>(
  context: KitContext<Tx>,
  landingPath: string,
  attempt: Attempt,
  page: { nonce: string; messages: KitMessages },
): PendingPage {
  const windowEnd = attempt.createdAt + context.landing.refreshWindowMs;
  const remainingMs = windowEnd - context.now();
  const checking = {
    refreshSeconds: remainingMs > 0 ? context.landing.refreshSeconds : null,
    refreshForSeconds: remainingMs > 0 ? Math.ceil(remainingMs / 1000) : null,
    checkAgainUrl: ownLandingUrl(landingPath, attempt),
  };
  return { ...checking, script: pendingScript(checking, page.nonce, page.messages) };
}

/**
 * The service's reason as the failure page takes it. The page's own outcomes share its reasons'
 * names; a service reason spelled like one is a reason the interface does not name (a generic
 * failure), not that outcome: the page must not say a newer request was applied, or the attempt
 * timed out, when the service said neither.
 */
const KIT_OUTCOME_REASONS: ReadonlySet<string> = new Set(['expired', 'superseded']);

function pageReasonOf(serviceReason: string): string {
  return KIT_OUTCOME_REASONS.has(serviceReason) ? 'generic' : serviceReason;
}

/** The page the attempt's own user sees for an outcome other than fulfilled. */
function ownerPage<Tx>(
  context: KitContext<Tx>,
  landingPath: string,
  completion: Exclude<Completion, { kind: 'fulfilled' }>,
  req: Request,
  res: Response,
): void {
  const nonce = newNonce();
  const messages = context.messages.forRequest(req);
  const { attempt } = completion;
  switch (completion.kind) {
    case 'superseded':
      // No restart form: the newer verification the user finished is the one that counts.
      sendPage(res, 200, context.pages.failed({ reason: 'superseded', restart: undefined }, nonce, messages), nonce);
      return;
    case 'failed':
    case 'expired': {
      const reason = completion.kind === 'failed' ? pageReasonOf(completion.reason) : 'expired';
      const restart = restartFormFor(context, req, attempt.action, attempt.state, attempt.destination);
      sendPage(res, 200, context.pages.failed({ reason, restart }, nonce, messages), nonce);
      return;
    }
    case 'pending':
      res.setHeader(PENDING_HEADER, 'pending');
      const pending = pendingPage(context, landingPath, attempt, { nonce, messages });
      sendPage(res, 200, context.pages.pending(pending, nonce, messages), nonce);
      return;
  }
}

/**
 * Whether the attempt's own user meets its fulfilment for the first time: this landing ran the
 * action, or the pending page's own check (a fetch the user never sees) ran it and this is the
 * arrival it opened, once per browser session. The action ran once either way.
 */
function ownFulfilment(
  req: Request,
  completion: Extract<Completion, { kind: 'fulfilled' }>,
  background: boolean,
): 'first' | 'replay' {
  const { sessionId } = completion.attempt;
  if (completion.firstTime && background) rememberUnseenFirst(req, sessionId);
  else if (!background && takeUnseenFirst(req, sessionId)) return 'first';
  return completion.firstTime ? 'first' : 'replay';
}

/**
 * rememberUnseenFirst, unless the session was destroyed while the landing worked (a sign-out), or
 * its store cannot tell: written into, it would be saved and sign its user in again. The error
 * the landing answers stays its own.
 */
async function rememberUnlessSignedOut<Tx>(context: KitContext<Tx>, req: Request, sessionId: string): Promise<void> {
  try {
    await renewSessionIfDestroyed(context, req);
  } catch {
    return;
  }
  rememberUnseenFirst(req, sessionId);
}

/** The landing's handler; the router mounts it at the returnUrl's path. */
export function landingHandler<Tx>(context: KitContext<Tx>, landingPath: string) {
  return async (req: Request, res: Response): Promise<void> => {
    // The pending page's own check: the page checks again by itself, so one read here.
    const background = req.get(BACKGROUND_CHECK_HEADER) === 'background';
    const rechecks = background ? 0 : context.landing.pendingRechecks;
    const completion = await completeReturn(context, queryOf(req), 'landing', res, rechecks).catch(
      async (error: unknown) => {
        // Answered 503, its fulfilment may still commit: the arrival after it is the user's first sight.
        if (isLateCommit(error)) await rememberUnlessSignedOut(context, req, readReturnedIds(queryOf(req)).sessionId);
        throw error;
      },
    );
    // Before anything is written into the session: a sign-out meanwhile is never undone.
    await renewSessionIfDestroyed(context, req);
    try {
      await answerLanding(context, landingPath, completion, { req, res, background });
    } catch (error) {
      // This landing ran the action but its user sees an error page: the arrival after it is their first sight.
      if (completion.kind === 'fulfilled' && completion.firstTime && !res.headersSent) {
        rememberUnseenFirst(req, completion.attempt.sessionId);
      }
      throw error;
    }
  };
}

/** What the landing answers for a completion: who is signed in matters only here. */
async function answerLanding<Tx>(
  context: KitContext<Tx>,
  landingPath: string,
  completion: Completion,
  { req, res, background }: { req: Request; res: Response; background: boolean },
): Promise<void> {
  const { attempt } = completion;
  const user = await currentUser(context, req);
  const isOwner = user !== null && user.userRef === attempt.userRef;
  if (isOwner && completion.kind === 'fulfilled') await context.onOwnLanding(req, attempt);
  const fulfilment = isOwner && completion.kind === 'fulfilled' ? ownFulfilment(req, completion, background) : 'replay';
  if (background && isOwner && completion.kind === 'fulfilled') {
    // The page's own check: its answer is never shown, the page opens the landing next. Only that
    // arrival asks the successPath and leaves the flash, so the app is told 'first' once.
    setNoStoreHeaders(res);
    redirectWithoutBody(res, 303, ownLandingUrl(landingPath, attempt));
    return;
  }
  // Decided on the server and checked as a same-origin path: never a URL from a parameter, a header or state.
  const successPath =
    isOwner && completion.kind === 'fulfilled' ? successPathOf(context, completion, fulfilment) : undefined;
  if (successPath !== undefined) {
    // The success page reads the outcome once: kit.attempts.takeLanded(req).
    leaveLandedFlash(req, { sessionId: attempt.sessionId, action: attempt.action, fulfilment });
    setNoStoreHeaders(res);
    redirectWithoutBody(res, 303, successPath);
    return;
  }
  if (!isOwner || completion.kind === 'fulfilled') {
    const nonce = newNonce();
    sendPage(res, 200, context.pages.complete({}, nonce, context.messages.forRequest(req)), nonce);
    return;
  }
  ownerPage(context, landingPath, completion, req, res);
}
