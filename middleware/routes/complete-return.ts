/**
 * A return (the landing's query, or the mobile completion's JSON body): `session_id` and `state`
 * are identifiers only, never evidence. Anything odd is a 400 and nothing is written.
 */
import { parse as parseQueryString } from 'node:querystring';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Request, Response } from 'express';
import type { KitContext } from '../context.ts';
import { isKitError, KitError, KitErrorCode } from '../errors.ts';
import {
  applyStatus,
  findReturnedAttempt,
  readStatus,
  startedByAnotherClient,
  type Completion,
  type StatusRead,
} from '../fulfil/fulfil.ts';
import { deliverAfterResponse } from '../fulfil/outcomes.ts';
import { logCompletion } from '../fulfil/completion-log.ts';
export { isLateCommit } from '../fulfil/late-commit.ts';
import { STATE_PATTERN } from './state.ts';
import { annotateSpan } from '../telemetry.ts';
import type { Attempt } from '../store/types.ts';
import type { OutcomeSource } from '../types.ts';
import { slowTheSweep } from '../sweep/pacing.ts';
import { SWEEP_WINDOW_MS } from '../sweep/sweep-options.ts';
import { SESSION_ID_PATTERN } from '../client/client.ts';

const MAX_LENGTH = 512;

export interface ReturnedIds {
  sessionId: string;
  state: string;
}

function read(source: Record<string, unknown>, name: string): string {
  const value = source[name];
  if (value === undefined || value === '') {
    throw new KitError(
      KitErrorCode.InvalidReturnParams,
      `This verification link is incomplete (no ${name}); start again.`,
    );
  }
  if (typeof value !== 'string') {
    throw new KitError(
      KitErrorCode.InvalidReturnParams,
      `This verification link is malformed (${name} given more than once or not as text); start again.`,
    );
  }
  if (value.length > MAX_LENGTH) {
    throw new KitError(
      KitErrorCode.InvalidReturnParams,
      `This verification link is malformed (${name} too long); start again.`,
    );
  }
  return value;
}

/**
 * The request's query as Express's default ("simple") parser reads it, whatever `query parser`
 * the app set: a name given twice is an array (refused below), and the kit's routes read the same
 * values however they are mounted.
 */
export function queryOf(req: Pick<Request, 'url'>): Record<string, unknown> {
  const at = req.url.indexOf('?');
  // Every pair: past the default 1000 the rest would be dropped, and a name given twice unseen.
  return at === -1 ? {} : parseQueryString(req.url.slice(at + 1), '&', '=', { maxKeys: 0 });
}

export function readReturnedIds(source: unknown): ReturnedIds {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new KitError(KitErrorCode.InvalidReturnParams, 'Expected session_id and state; start again.');
  }
  const bag = source as Record<string, unknown>;
  const sessionId = read(bag, 'session_id');
  const state = read(bag, 'state');
  if (!SESSION_ID_PATTERN.test(sessionId)) {
    throw new KitError(
      KitErrorCode.InvalidReturnParams,
      'This verification link is malformed (session_id); start again.',
    );
  }
  if (!STATE_PATTERN.test(state)) {
    throw new KitError(KitErrorCode.InvalidReturnParams, 'This verification link is malformed (state); start again.');
  }
  return { sessionId, state };
}

/**
 * Still pending at the end of the 24 h window: the service no longer keeps its outcome and the
 * sweep expires it (recording the expiry and its event) without reading it, so a return neither
 * reads it nor fulfils it; its user is told it expired and may start again. The sweep's own line.
 */
function pastTheWindow<Tx>(context: KitContext<Tx>, attempt: Attempt): boolean {
  return attempt.outcome === 'pending' && attempt.createdAt <= context.now() - SWEEP_WINDOW_MS;
}

/**
 * The status read and what it found recorded, where a 429 from the service reads as pending: the
 * user sees the pending page (whose own re-check, or the sweep, learns the outcome) and the kit
 * stops reading for this return. Only the read's: a `service_busy` the fulfilment throws is the
 * action's or the app's store's own, and must not pause every sweep process.
 */
async function completeUnlessBusy<Tx>(
  context: KitContext<Tx>,
  attempt: Attempt,
  source: OutcomeSource,
): Promise<{ completion: Completion; busy: boolean }> {
  if (pastTheWindow(context, attempt)) return { completion: { kind: 'expired', attempt, eventIds: [] }, busy: false };
  let read: StatusRead<Tx>;
  try {
    read = await readStatus(context, attempt);
  } catch (error) {
    if (!isKitError(error, KitErrorCode.ServiceBusy)) throw error;
    context.logger.warn(
      { route: source, sessionId: attempt.sessionId, retryAfterSeconds: error.retryAfterSeconds },
      'verification return: the service is rate limiting status reads; showing the pending page',
    );
    await slowTheSweep(context, error);
    return { completion: { kind: 'pending', attempt, eventIds: [] }, busy: true };
  }
  return { completion: await applyStatus(context, attempt, read, source), busy: false };
}

/**
 * The shared part of the landing and the mobile completion: validate, resolve the attempt by
 * state (session_id must match), then the one fulfil path; while the service still says pending,
 * re-check up to `rechecks` times. Whether the action runs never depends on who is signed in.
 */
export async function completeReturn<Tx>(
  context: KitContext<Tx>,
  source: unknown,
  route: 'landing' | 'mobile-complete',
  res: Response,
  rechecks = context.landing.pendingRechecks,
): Promise<Completion> {
  const ids = readReturnedIds(source);
  const outcomeSource = route === 'landing' ? 'landing' : 'mobile';
  let attempt = await findReturnedAttempt(context.store, ids);
  let { completion, busy } = await completeUnlessBusy(context, attempt, outcomeSource);
  // Another client's attempt is never read here: waiting to check it again would change nothing.
  const readable = !startedByAnotherClient(context, attempt);
  for (let i = 0; completion.kind === 'pending' && !busy && readable && i < rechecks; i++) {
    await sleep(context.landing.pendingRecheckIntervalMs);
    // Read again as at first: the attempt the link names, or the link's error (a store of the app's own may err).
    attempt = await findReturnedAttempt(context.store, ids);
    ({ completion, busy } = await completeUnlessBusy(context, attempt, outcomeSource));
  }
  const { sessionId, action } = completion.attempt;
  logCompletion(context.logger, route, completion);
  annotateSpan({
    'verify_kit.session_id': sessionId,
    'verify_kit.action': action,
    'verify_kit.outcome': completion.kind,
  });
  // onOutcome hears of what this return recorded once the response is out, never delaying it.
  deliverAfterResponse(context, completion.eventIds, res);
  return completion;
}
