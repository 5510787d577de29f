/**
 * What a start request asks for, read on the server: the body (parsed here unless the app already
 * did; a mobile start's JSON only here, json-body.ts), the registered action it names, and the parameters `prepare` returns for it (on a restart,
 * from the finished attempt's stored parameters, checked again).
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { KitContext } from '../context.ts';
import { withHookDeadline } from './hook-deadline.ts';
import { isKitError, KitError, KitErrorCode } from '../errors.ts';
import type { ResolvedUser } from '../options/options.ts';
import { isRecord } from '../options/option-problems.ts';
import { showAsWritten } from './answer-error.ts';
import { bodyProblem, strictJson } from './json-body.ts';
import { isStateShaped } from './state.ts';
import { boundedStepUp } from '../step-up/bounded-step-up.ts';
import { findKeptIntent, INTENT_FIELD } from '../step-up/scope-actions.ts';
import type { Attempt } from '../store/types.ts';
import type { ActionDefinition, JsonValue, PrepareContext } from '../types.ts';

const BODY_LIMIT = '16kb';

export function bodyParsers<Tx>(context: KitContext<Tx>): RequestHandler[] {
  const urlencoded = express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: 50 });
  return context.platform === 'mobile' ? [strictJson(BODY_LIMIT), urlencoded] : [urlencoded];
}

/**
 * Runs the body parsers (skipped by them when the app already read the body, but for a JSON body
 * the kit must read itself: that refusal is passed on as it is).
 */
export async function readBody(parsers: RequestHandler[], req: Request, res: Response): Promise<void> {
  for (const parser of parsers) {
    await new Promise<void>((resolve, reject) => {
      parser(req, res, (error?: unknown) => {
        if (error === undefined || error === null) resolve();
        else if (isKitError(error)) reject(error);
        else {
          const problem = bodyProblem(error, 'The form could not be read; go back and try again.');
          reject(new KitError(KitErrorCode.InvalidActionParams, problem));
        }
      });
    });
  }
}

export function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  return isRecord(body) ? body : {};
}

export function pickAction<Tx>(context: KitContext<Tx>, value: unknown): ActionDefinition<Tx> {
  const action = typeof value === 'string' ? context.actions.get(value) : undefined;
  if (action === undefined) {
    throw new KitError(
      KitErrorCode.UnknownAction,
      'This verification request names no known action; go back and try again.',
    );
  }
  return action;
}

/**
 * The action a start names: in its own fields, or, for a start kept until its user confirmed it's
 * them (the confirmation posts only the kept request's id), in the kept fields. Such a start must
 * be of an action whose step-up then judges it; any other is refused.
 */
export async function pickStartAction<Tx>(
  context: KitContext<Tx>,
  body: Record<string, unknown>,
): Promise<ActionDefinition<Tx>> {
  const intentId = body[INTENT_FIELD];
  if (intentId === undefined) return pickAction(context, body.action);
  const { stepUp } = context.store;
  // Waited on no longer than hookTimeouts.store, as the step-up store is wherever a request calls it.
  const intent = await findKeptIntent(stepUp && boundedStepUp(stepUp, context), intentId);
  const kept = isRecord(intent?.fields) ? intent.fields.action : undefined;
  const action = typeof kept === 'string' ? context.actions.get(kept) : undefined;
  if (action?.requireRecentVerification === undefined) {
    throw new KitError(KitErrorCode.StepUpIntentUnusable, 'This request can no longer be used; nothing was changed.');
  }
  return action;
}

/**
 * The finished (failed or expired) attempt of this user and action that a restart names; undefined
 * on a fresh start. Anything else is refused: an old attempt cannot be restarted into a new one.
 */
export async function restartedAttempt<Tx>(
  context: KitContext<Tx>,
  action: ActionDefinition<Tx>,
  userRef: string,
  restart: unknown,
): Promise<Attempt | undefined> {
  if (restart === undefined) return undefined;
  const previous = isStateShaped(restart) ? await context.store.findAttemptByState(restart) : undefined;
  if (
    previous === undefined ||
    previous.userRef !== userRef ||
    previous.action !== action.name ||
    (previous.outcome !== 'failed' && previous.outcome !== 'expired')
  ) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'That verification cannot be restarted; go back and start again.',
    );
  }
  return previous;
}

/**
 * The server-side parameters: from `prepare`, which runs on every start. A restart hands it the
 * finished attempt's stored parameters to check again for the user as they are now, so whatever
 * `prepare` enforces (authorisation, blocklists) cannot be bypassed by restarting an old attempt.
 */
export async function paramsFor<Tx>(
  context: KitContext<Tx>,
  req: Request,
  action: ActionDefinition<Tx>,
  user: ResolvedUser,
  previous: Attempt | undefined,
): Promise<JsonValue> {
  const restartParams = previous?.params;
  if (action.prepare === undefined) return restartParams ?? null;
  const prepareContext: PrepareContext = {
    user: { userRef: user.userRef, destination: user.destination },
    ...(previous === undefined ? {} : { restartParams: restartParams ?? null }),
  };
  let params: JsonValue | undefined;
  try {
    // A KitError from prepare carries the integrator's own text for its users: shown as written.
    const { prepare } = action;
    params = await withHookDeadline(context, 'prepare', () => prepare(req, prepareContext));
  } catch (error) {
    throw showAsWritten(error);
  }
  return storedParams(params === undefined ? null : params);
}

/**
 * `prepare`'s value as the store keeps it (its JSON, read back), checked before anything is sent
 * or counted: a value JSON cannot hold (a BigInt, an object holding itself, a function) would
 * otherwise fail the attempt's insert after the service had texted the code.
 */
function storedParams(params: unknown): JsonValue {
  let text: string | undefined;
  try {
    text = JSON.stringify(params);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    throw new KitError(
      KitErrorCode.HookFailed,
      '`prepare` returned a value JSON cannot hold (a BigInt, an object holding itself, a function...); return JSON: objects, arrays, strings, numbers, booleans or null.',
    );
  }
  return JSON.parse(text) as JsonValue;
}
