/**
 * The start route: POST only, CSRF-checked, signed-in users only. The server picks the action from
 * the registered list by name, prepares its parameters, creates a fresh session with a fresh
 * state and Idempotency-Key, stores the attempt, and answers the auto-submit page (web) or JSON
 * (mobile). Nothing the browser sends chooses a URL.
 *
 * Also the start-again page (GET), where a used or restored auto-submit page goes instead of
 * re-sending its handoff. The start's answers are start-pages.ts; the verifyUrl's check, verify-url.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import type { KitContext } from '../context.ts';
import type { ResolvedUser } from '../options/options.ts';
import { verifyCsrf } from './csrf.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { newState } from './state.ts';
import { route } from './answer-error.ts';
import { currentUser } from './user.ts';
import { annotateSpan, countStart } from '../telemetry.ts';
import { bodyOf, bodyParsers, paramsFor, pickStartAction, readBody } from './start-request.ts';
import { attemptFor, type AttemptUser } from './destination.ts';
import { maskDestination } from '../numbers/mask-number.ts';
import type { Attempt } from '../store/types.ts';
import type { ActionDefinition, CreatedSession, JsonValue } from '../types.ts';
import { pumpingGuard, type PumpingPass } from '../pumping/pumping-guard.ts';
import { createdNoSession } from '../client/created-no-session.ts';
import { allowStart, giveBackUnsent } from './start-budgets.ts';
import { serviceUserRefFor } from './service-user-ref.ts';
import { stepUpBeforeStart } from '../step-up/guard.ts';
import { INTENT_FIELD } from '../step-up/scope-actions.ts';
import {
  answeredWithNumberForm,
  answerStart,
  methodNotAllowed,
  startAgainHandler,
  startAgainUrl,
} from './start-pages.ts';
import { originOfVerifyUrl } from './verify-url.ts';

export { originOfVerifyUrl } from './verify-url.ts';

/**
 * Errors the create call itself failed with. Only such a failure may say no session was made: once
 * it was, the text is on its way, and a store of the app's own failing to keep the attempt with a
 * KitError `service_busy` or `service_rejected` of its own must not give the start back.
 */
const createFailures = new WeakSet<object>();

function failedCreate(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) createFailures.add(error);
  return error;
}

/** Whether a failed start certainly sent no text: its create call failed, and said so. */
function sentNoText(error: unknown): boolean {
  return typeof error === 'object' && error !== null && createFailures.has(error) && createdNoSession(error);
}

/**
 * A fresh state, a fresh session (its own Idempotency-Key) and the attempt stored; the text the
 * session sent is counted for the SMS pumping rules beside the attempt's write (SQLite: in its
 * group commit; PostgreSQL: at the same time on another connection), not after it.
 */
async function createAttempt<Tx>(
  context: KitContext<Tx>,
  user: ResolvedUser,
  action: ActionDefinition<Tx>,
  params: JsonValue,
  originOf: (verifyUrl: string) => string,
  pumping: PumpingPass | undefined,
): Promise<CreatedSession> {
  const state = newState();
  const serviceUserRef = serviceUserRefFor(context.serviceRefKey, action, user);
  let created: CreatedSession;
  try {
    created = await context.client.createSession(
      {
        returnUrl: context.returnUrl,
        destination: user.destination,
        operationSensitivity: action.operationSensitivity,
        // The service keeps passkeys per userRef: what it is sent decides what `verified` proves.
        userRef: serviceUserRef ?? user.userRef,
        state,
        platform: context.platform,
      },
      randomUUID(),
    );
  } catch (error) {
    throw failedCreate(error);
  }
  // An unusable verifyUrl is refused before anything is stored.
  originOf(created.verifyUrl);
  const now = context.now();
  const inserted = context.store.insertAttempt({
    state,
    sessionId: created.sessionId,
    userRef: user.userRef,
    serviceUserRef,
    action: action.name,
    params,
    // The number the session was created for: fulfil receives exactly this.
    destination: user.destination,
    // A successPath function is called at the landing, with the outcome.
    returnTo: typeof action.successPath === 'string' ? action.successPath : '',
    sensitivity: action.operationSensitivity,
    platform: context.platform,
    // Only this client can read the session: the service answers `pending` to any other.
    clientId: context.clientId,
    createdAt: now,
    nextCheckAt: now + context.sweep.firstCheckAfterMs,
  });
  // The text is on its way whatever the insert does; `sent` never rejects.
  await Promise.all([inserted, pumping?.sent(created.sessionId)]);
  context.logger.info(
    { route: 'start', action: action.name, sessionId: created.sessionId, replayed: created.replayed },
    'verification started',
  );
  countStart({ action: action.name, platform: context.platform });
  annotateSpan({ 'verify_kit.action': action.name, 'verify_kit.session_id': created.sessionId });
  return created;
}

/** The action's prepared params, boxed (prepare may return null, which is params too). */
async function prepared<Tx>(
  context: KitContext<Tx>,
  req: Request,
  action: ActionDefinition<Tx>,
  found: { attemptUser: AttemptUser; previous: Attempt | undefined },
): Promise<{ params: JsonValue }> {
  return { params: await paramsFor(context, req, action, found.attemptUser.user, found.previous) };
}

/** Mounts the start route (and, on the web, the start-again page). */
export function mountStart<Tx>(router: Router, context: KitContext<Tx>, startPath: string): void {
  // resolveKitOptions refuses a web start route without its start-again page.
  const startAgainPath = context.routes.startAgain === false ? startPath : context.routes.startAgain;
  const format = context.platform === 'mobile' ? 'json' : 'html';
  const parsers = bodyParsers(context);
  const originOf = originOfVerifyUrl();
  const pumping = pumpingGuard({
    pumping: context.pumping,
    store: context.store.pumping,
    logger: context.logger,
    now: context.now,
    challengeTimeoutMs: context.hookTimeouts.challenge,
    ipv6Subnet: context.ipv6Subnet,
    releaseTimeoutMs: context.hookTimeouts.limits,
  });

  const stepUps = new Map(
    [...context.actions.values()].flatMap((action) =>
      action.requireRecentVerification === undefined
        ? []
        : [[action.name, stepUpBeforeStart(context, action.requireRecentVerification)] as const],
    ),
  );

  const start = async (req: Request, res: Response): Promise<void> => {
    keepClientAddress(req);
    await readBody(parsers, req, res);
    await verifyCsrf(context, req);
    const signedIn = await currentUser(context, req);
    if (signedIn === null) throw new KitError(KitErrorCode.NotSignedIn, 'Sign in to continue.');
    const action = await pickStartAction(context, bodyOf(req));
    const stepUp = stepUps.get(action.name);
    const who = (body: Record<string, unknown>) =>
      attemptFor(context, req, action, signedIn, body, (error, restarted) =>
        answeredWithNumberForm(context, req, res, action, body, error, restarted),
      );
    // Bad input (a number that cannot be texted, a restart of nothing, a start the action's own
    // prepare refuses) is refused before a step-up keeps it: nothing kept, no text to confirm it.
    // A kept start's fields are read after it.
    const kept = bodyOf(req)[INTENT_FIELD] !== undefined;
    const checked = stepUp === undefined || kept ? undefined : await who(bodyOf(req));
    if (checked === 'answered') return;
    const checkedPrepare = checked === undefined ? undefined : await prepared(context, req, action, checked);
    // Then: a start its step-up refuses spends and sends nothing (a restart is judged the same).
    if (stepUp !== undefined && !(await stepUp(req, res))) return;
    // Read after the step-up: a confirmed kept start runs with the fields it was kept with.
    const found = checked ?? (await who(bodyOf(req)));
    if (found === 'answered') return;
    const { user, stored } = found.attemptUser;
    const { params } = checkedPrepare ?? (await prepared(context, req, action, found));
    // Before the budgets: a start refused as SMS pumping spends none of them.
    const pass = await pumping(req, { ...user, number: stored });
    // Refused by the budgets or the app's hook, or the service busy or refusing: no session, no
    // text, so the text the pumping check counted is given back. Any other failure may have sent it.
    const receipt = await allowStart(context, req, user, action).catch(async (error: unknown) => {
      await pass?.unsent();
      throw error;
    });
    const created = await createAttempt(context, user, action, params, originOf, pass).catch(async (error: unknown) => {
      if (sentNoText(error)) await giveBackUnsent(context, receipt, pass);
      throw error;
    });
    const masked = action.destination === 'entered' ? maskDestination(user.destination) : undefined;
    answerStart(context, res, created, startAgainUrl(startAgainPath, action.name), originOf, masked);
  };

  router.all(startPath, methodNotAllowed(context, format));
  router.post(startPath, route(context, 'start', format, start));
  if (context.platform === 'web') {
    router.get(startAgainPath, route(context, 'start-again', 'html', startAgainHandler(context)));
  }
}

/**
 * The client's address as the start arrived, kept for the whole start. The SMS pumping rules and
 * the start budgets read `req.ip` after the body, the session and `prepare` were awaited, and a
 * client that hangs up meanwhile leaves a socket with no address: its start was counted as no one's
 * (one shared key), out of reach of its address's rules and of an operator's block of it.
 */
function keepClientAddress(req: Request): void {
  const ip = req.ip ?? req.socket.remoteAddress;
  if (ip !== undefined) Object.defineProperty(req, 'ip', { value: ip, configurable: true, enumerable: true });
}
