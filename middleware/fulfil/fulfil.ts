/**
 * The one fulfil path, shared by the landing, the mobile completion and the sweep.
 *
 * Arrival proves nothing: the outcome is re-read from the service, and the action runs only when
 * the status is `verified` AND the echoed state and userRef equal what was stored for the attempt
 * (the session_id was matched by the caller: findReturnedAttempt, or the sweep's own claim).
 * The action and its mark commit in one transaction keyed by sessionId, so concurrent callers
 * run it once. The same transaction decides the order between attempts of one user and action
 * (the newest started one that is verified wins) and writes the outcome event for onOutcome.
 */
import { DEFAULT_HOOK_TIMEOUTS } from '../deadline.ts';
import { callFulfil } from './call-fulfil.ts';
import { isKitError, KitError, KitErrorCode } from '../errors.ts';
import { describeError, lateRejectionLogger } from '../logger.ts';
import { countsTexts, countVerifiedText } from './count-verified.ts';
import { noteLateCommit } from './late-commit.ts';
import { commitEach, type FulfilCommitter } from './group-commit.ts';
import type { FulfilContext } from '../context.ts';
import type { Attempt, OutcomeRecording, VerifyStore } from '../store/types.ts';
import { countOutcomes, inResultSpan, SpanName } from '../telemetry.ts';
import type { ActionDefinition, OutcomeSource } from '../types.ts';
import {
  noteSupersededCounted,
  readStatus,
  settledCompletion,
  type Completion,
  type StatusRead,
} from './read-status.ts';

export { readStatus, startedByAnotherClient, type Completion, type StatusRead } from './read-status.ts';
export { countsTexts } from './count-verified.ts';

/**
 * Looks up the attempt a return (landing or mobile completion) refers to: resolved by `state`,
 * then the `session_id` (and the state) must be the ones stored for it. Writes nothing.
 */
export async function findReturnedAttempt<Tx>(
  store: VerifyStore<Tx>,
  returned: { sessionId: string; state: string },
): Promise<Attempt> {
  const attempt = await store.findAttemptByState(returned.state);
  if (attempt === undefined) {
    throw new KitError(KitErrorCode.UnknownAttempt, 'No verification attempt matches this link; start again.');
  }
  // The store's answer is checked too: a store of the app's own may answer another attempt.
  if (attempt.sessionId !== returned.sessionId || attempt.state !== returned.state) {
    throw new KitError(
      KitErrorCode.SessionMismatch,
      'This link does not belong to the verification it names; start again.',
    );
  }
  return attempt;
}

/**
 * Re-reads the session and fulfils, records the failure, or reports it still pending. `source`
 * names the caller in outcome events and log lines.
 */
export async function completeAttempt<Tx>(
  deps: FulfilContext<Tx>,
  attempt: Attempt,
  source: OutcomeSource,
): Promise<Completion> {
  return applyStatus(deps, attempt, await readStatus(deps, attempt), source);
}

/**
 * The write half of completeAttempt: records what `read` found. A verified read is fulfilled
 * through `committer`: on its own by default, grouped with others by the sweep.
 */
export async function applyStatus<Tx>(
  deps: FulfilContext<Tx>,
  attempt: Attempt,
  read: StatusRead<Tx>,
  source: OutcomeSource,
  committer: FulfilCommitter<Tx> = commitEach(deps.store),
): Promise<Completion> {
  const event: OutcomeRecording | undefined = deps.onOutcome === undefined ? undefined : { source };
  const counting = countsTexts(deps);
  switch (read.kind) {
    case 'settled':
      // A fulfilled attempt read again (a reload, the mobile completion posted again): the first
      // read's count may have failed, and markVerified counts once, so it is made again here. A
      // superseded one its user verified all the same is a real user's text too.
      if (counting && read.completion.kind === 'fulfilled') await countVerifiedText(deps, attempt);
      if (counting && read.textVerified === true && (await countVerifiedText(deps, attempt))) {
        noteSupersededCounted(attempt.sessionId);
      }
      return read.completion;
    case 'pending':
      return { kind: 'pending', attempt, eventIds: [] };
    case 'failed':
      return recordFailed(deps, attempt, read.reason, source, event);
    case 'verified':
      break;
  }
  // Verified by its user whatever follows: counted even when its action is gone or a newer one wins.
  if (counting) await countVerifiedText(deps, attempt);
  if (read.action === undefined) {
    throw new KitError(
      KitErrorCode.UnknownAction,
      `Attempt uses action "${attempt.action}", which is no longer registered; register it again to fulfil it.`,
    );
  }
  if (!provesWhatTheActionNeeds(read.action, attempt)) {
    throw new KitError(
      KitErrorCode.ServiceResponseMismatch,
      `Action "${attempt.action}" proves the destination, but this attempt was started without a userRef bound to ` +
        'its number (while the action proved only the user), so a passkey may have answered it; nothing was fulfilled.',
    );
  }
  const result = await runFulfilment(deps, committer, read.action, attempt, event);
  switch (result.kind) {
    case 'fulfilled':
      for (const older of result.superseded) logSuperseded(deps, older, source);
      countOutcomes(1, 'fulfilled', source);
      countOutcomes(result.superseded.length, 'superseded', source);
      return { kind: 'fulfilled', attempt: result.attempt, firstTime: true, eventIds: result.eventIds };
    case 'superseded':
      // The caller logs its own completion (completion-log.ts); the older ones above only here.
      countOutcomes(1, 'superseded', source);
      return { kind: 'superseded', attempt: result.attempt, eventIds: result.eventIds };
    case 'already_fulfilled':
      return { kind: 'fulfilled', attempt: result.attempt, firstTime: false, eventIds: [] };
    case 'not_pending':
      return settledCompletion(result.attempt ?? attempt) ?? { kind: 'pending', attempt, eventIds: [] };
  }
}

/**
 * Whether a verified read could fulfil the attempt: its action is registered and it proves what the
 * action needs. The sweep spends no read on one that could not, unless the read counts its text.
 */
export function fulfillable<Tx>(deps: FulfilContext<Tx>, attempt: Attempt): boolean {
  const action = deps.actions.get(attempt.action);
  return action !== undefined && provesWhatTheActionNeeds(action, attempt);
}

/**
 * An action that proves the destination needs the echo of a userRef bound to the number: an attempt
 * started without one (an older deployment, or another kit on the database) proves only its user.
 */
function provesWhatTheActionNeeds<Tx>(action: ActionDefinition<Tx>, attempt: Attempt): boolean {
  return action.proves !== 'destination' || typeof attempt.serviceUserRef === 'string';
}

async function recordFailed<Tx>(
  deps: FulfilContext<Tx>,
  attempt: Attempt,
  reason: string,
  source: OutcomeSource,
  event: OutcomeRecording | undefined,
): Promise<Completion> {
  const failedAt = deps.now();
  const { eventIds } = await deps.store.recordFailure(attempt.sessionId, reason, failedAt, event);
  const current = await deps.store.findAttemptByState(attempt.state);
  // This call recorded it when the stored failure carries its time (another caller's would not).
  if (current?.outcome === 'failed' && current.finishedAt === failedAt) countOutcomes(1, 'failed', source, reason);
  // A concurrent caller may have settled it first; report what is stored.
  const failed: Completion = { kind: 'failed', attempt, reason, eventIds: [] };
  const stored = settledCompletion(current ?? attempt) ?? failed;
  return { ...stored, eventIds };
}

function logSuperseded<Tx>(deps: FulfilContext<Tx>, attempt: Attempt, source: OutcomeSource): void {
  deps.logger?.info(
    {
      route: source,
      sessionId: attempt.sessionId,
      action: attempt.action,
      supersededBy: attempt.supersededBy,
      outcome: 'superseded',
    },
    'older verification superseded: a newer one of the same user and action was applied, so this one never will be',
  );
}

function runFulfilment<Tx>(
  deps: FulfilContext<Tx>,
  committer: FulfilCommitter<Tx>,
  action: ActionDefinition<Tx>,
  attempt: Attempt,
  event: OutcomeRecording | undefined,
) {
  return inResultSpan(
    SpanName.Fulfil,
    () => ({ 'verify_kit.session_id': attempt.sessionId, 'verify_kit.action': action.name }),
    () => fulfilInTransaction(deps, committer, action, attempt, event),
    (result) => ({ 'verify_kit.result': result.kind }),
  );
}

async function fulfilInTransaction<Tx>(
  deps: FulfilContext<Tx>,
  committer: FulfilCommitter<Tx>,
  action: ActionDefinition<Tx>,
  attempt: Attempt,
  event: OutcomeRecording | undefined,
) {
  try {
    return await committer.fulfil({
      attempt,
      // Async (PostgreSQL) under its deadline: a late one rolls back and is retried by the sweep;
      // a promise on SQLite is refused, and that fulfil is not called again (call-fulfil.ts).
      // A method, not an arrow: run through tsx, an arrow property is named by a defineProperty per call.
      effect(tx, stored) {
        const verified = {
          sessionId: stored.sessionId,
          state: stored.state,
          userRef: stored.userRef,
          action: stored.action,
          params: stored.params,
          destination: stored.destination,
          startedAt: stored.createdAt,
        };
        return callFulfil(action, tx, verified, {
          synchronous: deps.store.synchronousTransactions === true,
          deadlineMs: deps.hookTimeouts?.fulfil ?? DEFAULT_HOOK_TIMEOUTS.fulfil,
          onLateRejection: deps.logger && lateRejectionLogger(deps.logger),
        });
      },
      now: deps.now(),
      options: { ordering: action.ordering ?? 'latest', ...(event === undefined ? {} : { event }) },
    });
  } catch (error) {
    noteLateCommit(error);
    if (isKitError(error)) throw error;
    logFulfilFailure(deps, action, attempt, error);
    throw new KitError(
      KitErrorCode.FulfilFailed,
      `Action "${action.name}" failed; nothing was marked and it will be retried.`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Why a fulfilment failed, for the operator: the action's own error (or the store's, when its
 * transaction did not commit), which the `fulfil_failed` answer and the sweep's line do not carry.
 */
function logFulfilFailure<Tx>(deps: FulfilContext<Tx>, action: ActionDefinition<Tx>, attempt: Attempt, error: unknown) {
  const cause = error instanceof Error && error.cause !== undefined ? { cause: describeError(error.cause) } : {};
  deps.logger?.error(
    { sessionId: attempt.sessionId, action: action.name, err: describeError(error), ...cause },
    `action "${action.name}": the fulfilment failed (fulfil threw, or its transaction did not commit); nothing was marked`,
  );
}
