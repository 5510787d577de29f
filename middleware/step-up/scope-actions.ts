/**
 * A step-up scope as the kit runs it: an action whose verification, once fulfilled, grants the
 * browser session that asked for it. It goes through the one fulfil path, so exactly-once and
 * `proves` hold as for any action; its `prepare` binds the attempt to a request kept server-side
 * (the intent), and its successPath returns the user to that request's own path: never to
 * anything a browser sent. The grant itself is written by the landing (grantOnLanding), and only
 * when the landing comes from that same browser session: a grant is of use to that session alone,
 * and a code entered elsewhere (a relayed hand-off) must not open it.
 */
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { KitError, KitErrorCode } from '../errors.ts';
import { isStateShaped } from '../routes/state.ts';
import { isRecord } from '../options/option-problems.ts';
import type { KitLogger } from '../logger.ts';
import type { Attempt, StepUpIntent, StepUpStore } from '../store/types.ts';
import type { ActionDefinition, JsonValue, ScopeDefinition } from '../types.ts';
import { methodOf } from './request-kind.ts';
import { unreadableStoreAnswer } from './store-answers.ts';

/** The confirmation form's field naming the kept request. */
export const INTENT_FIELD = '_verify_kit_intent';
/** How long a kept request waits for its user to verify and confirm. */
export const INTENT_TTL_MS = 15 * 60_000;

/** What a scope's attempt stores: never the return path from the browser, always the intent's. */
interface ScopeParams {
  [key: string]: JsonValue;
  intentId: string;
  resourceKey: string;
  browserSession: string;
  returnPath: string;
}

/**
 * A one-way digest of express-session's id: grants and intents are bound to the browser session
 * without the store holding the cookie's secret value.
 */
export function browserSessionOf(req: Request): string {
  const id = (req as Request & { sessionID?: unknown }).sessionID;
  if (typeof id !== 'string' || id === '') {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'requireRecentVerification needs a browser session: mount express-session (app.use(session({...}))) before the guarded routes.',
    );
  }
  return createHash('sha256').update(`verify-kit-step-up\0${id}`).digest('base64url');
}

/**
 * The kept request an id from the browser names. Only an id shaped as the kit makes them is looked
 * up: PostgreSQL refuses a NUL byte with an error, and any other id names nothing kept.
 */
export async function findKeptIntent(
  stepUp: StepUpStore | undefined,
  intentId: unknown,
): Promise<StepUpIntent | undefined> {
  const intent = isStateShaped(intentId) ? theIntent(await stepUp?.findIntent(intentId), intentId) : undefined;
  // Null is unused and a time is used; `undefined` or `false` says neither. Read as unused, a used
  // form would be offered again, its one run resting on consumeIntent alone: the kit refuses it.
  if (intent !== undefined && (intent.consumedAt === undefined || (intent.consumedAt as unknown) === false)) {
    throw unreadableStoreAnswer(
      'stepUp.findIntent answered an intent whose consumedAt is',
      intent.consumedAt,
      'null (not used) or the time it was used',
      'nothing was run or sent',
    );
  }
  return intent;
}

/**
 * Consumes the kept request for one caller: the intent when the store gave it back, else undefined
 * (expired, or another caller, on any process, consumed it first).
 */
export async function consumeKeptIntent(
  stepUp: StepUpStore,
  intentId: string,
  now: number,
): Promise<StepUpIntent | undefined> {
  return theIntent(await stepUp.consumeIntent(intentId, now), intentId);
}

/**
 * What a store answered, when it is the intent asked for. A custom store may answer `null` (or
 * `false`, or its driver's result) for "none": read as an intent, a null would crash the request,
 * and a consumption would count as won, so two confirmations racing would both run the form.
 */
function theIntent(answer: unknown, intentId: string): StepUpIntent | undefined {
  return isRecord(answer) && answer.intentId === intentId ? (answer as unknown as StepUpIntent) : undefined;
}

/** True when `intent` may still be used by this user, in this browser session, for `scope`. */
export function intentIsUsable(
  intent: StepUpIntent | undefined,
  expected: { scope: string; userRef: string; browserSession: string; now: number },
): intent is StepUpIntent {
  return (
    intent !== undefined &&
    intent.scope === expected.scope &&
    intent.userRef === expected.userRef &&
    intent.browserSession === expected.browserSession &&
    intent.consumedAt === null &&
    intent.expiresAt > expected.now
  );
}

/**
 * True when `intent`, kept for this same request (method and path), is another guard's: of another
 * scope, or bound to a resource while this guard binds none (its own are all bound to '').
 */
export function isAnotherGuards(
  intent: StepUpIntent | undefined,
  guard: { scope: string; bindsResource: boolean },
  req: Request,
): boolean {
  if (intent === undefined || intent.method !== methodOf(req) || intent.path !== req.originalUrl) return false;
  return intent.scope !== guard.scope || (!guard.bindsResource && intent.resourceKey !== '');
}

function isScopeParams(value: unknown): value is ScopeParams {
  return isRecord(value) && typeof value.intentId === 'string' && typeof value.returnPath === 'string';
}

/**
 * Where the landing sends the user back: the kept page (GET), or the kit's confirmation of a kept
 * form, whatever its method (a PUT or DELETE reached through a method override too).
 */
function returnPathOf(intent: StepUpIntent, stepUpPath: string): string {
  return intent.method === 'GET' ? intent.path : `${stepUpPath}?intent=${encodeURIComponent(intent.intentId)}`;
}

export function scopeAction<Tx>(
  scope: ScopeDefinition,
  stepUp: StepUpStore,
  deps: { now: () => number; stepUpPath: string },
): ActionDefinition<Tx> {
  return {
    name: scope.name,
    operationSensitivity: scope.operationSensitivity,
    proves: scope.proves ?? 'user',
    // Each grant is its own browser session's and resource's: a newer verification in another
    // session, or for another resource, must not cancel it (an older grant never replaces a newer one).
    ordering: 'independent',
    async prepare(req, { user, restartParams }) {
      const intentId = isScopeParams(restartParams)
        ? restartParams.intentId
        : (req.body as { intent?: unknown })?.intent;
      const intent = await findKeptIntent(stepUp, intentId);
      const expected = {
        scope: scope.name,
        userRef: user.userRef,
        browserSession: browserSessionOf(req),
        now: deps.now(),
      };
      if (!intentIsUsable(intent, expected)) {
        throw new KitError(KitErrorCode.StepUpIntentUnusable, 'Open the page you wanted again to confirm it is you.');
      }
      const params: ScopeParams = {
        intentId: intent.intentId,
        resourceKey: intent.resourceKey,
        browserSession: intent.browserSession,
        returnPath: returnPathOf(intent, deps.stepUpPath),
      };
      return params;
    },
    successPath: ({ params }) => (isScopeParams(params) ? params.returnPath : '/'),
    // Nothing here: the sweep fulfils too, and it comes from no browser session (grantOnLanding).
    fulfil() {},
  };
}

/** The browser session's digest, or undefined when the request has none. */
function browserSessionIfAny(req: Request): string | undefined {
  const id = (req as Request & { sessionID?: unknown }).sessionID;
  return typeof id === 'string' && id !== '' ? browserSessionOf(req) : undefined;
}

/**
 * What the landing does for a fulfilled attempt of its own user: for a scope's attempt, writes the
 * grant when the landing comes from the browser session the attempt was started in. Idempotent (a
 * reload writes nothing more), and a landing after the sweep fulfilled the attempt still grants.
 */
export function grantOnLanding(
  scopes: ReadonlyMap<string, ScopeDefinition>,
  stepUp: StepUpStore,
  deps: { now: () => number; logger: KitLogger },
): (req: Request, attempt: Attempt) => Promise<void> {
  return async (req, attempt) => {
    const { params } = attempt;
    if (!scopes.has(attempt.action) || !isScopeParams(params)) return;
    if (browserSessionIfAny(req) !== params.browserSession) {
      deps.logger.warn(
        { route: 'landing', sessionId: attempt.sessionId, scope: attempt.action },
        'step-up: no grant: the verification landed in a browser session other than the one that asked for it',
      );
      return;
    }
    await stepUp.insertGrant({
      sessionId: attempt.sessionId,
      userRef: attempt.userRef,
      scope: attempt.action,
      resourceKey: params.resourceKey,
      browserSession: params.browserSession,
      // The service does not say when the code was entered: the attempt's start is the latest
      // time the kit can prove, so a verification learned late grants nothing fresh.
      startedAt: attempt.createdAt,
      grantedAt: deps.now(),
    });
  };
}
