/**
 * The start route: POST only, CSRF-checked, signed-in users only. The server picks the action from
 * the registered list by name, prepares its parameters, creates a fresh session with a fresh
 * state and Idempotency-Key, stores the attempt, and answers the auto-submit page (web) or JSON
 * (mobile). Nothing the browser sends chooses a URL.
 *
 * Also the start-again page (GET), where a used or restored auto-submit page goes instead of
 * re-sending its handoff.
 */
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { KitContext } from '../context.ts';
import type { ResolvedUser } from '../options/options.ts';
import { isLoopbackHostname } from '../options/service-access.ts';
import { verifyCsrf } from './csrf.ts';
import { isKitError, KitError, KitErrorCode } from '../errors.ts';
import { handoffPage } from '../pages/handoff-page.ts';
import { sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { newNonce, newState } from './state.ts';
import { queryOf } from './complete-return.ts';
import { logKitError, route } from './answer-error.ts';
import { currentUser } from './user.ts';
import { annotateSpan, countStart } from '../telemetry.ts';
import { bodyOf, bodyParsers, paramsFor, pickAction, pickStartAction, readBody } from './start-request.ts';
import { attemptFor, type AttemptUser } from './destination.ts';
import { maskDestination } from '../numbers/mask-number.ts';
import { ENTERED_NUMBER_FIELD } from '../pages/pages.ts';
import type { Attempt } from '../store/types.ts';
import type { ActionDefinition, CreatedSession, JsonValue } from '../types.ts';
import { restartFormFor } from './restart-form.ts';
import { pumpingGuard, type PumpingPass } from '../pumping/pumping-guard.ts';
import { createdNoSession } from '../client/created-no-session.ts';
import { allowStart, giveBackUnsent } from './start-budgets.ts';
import { serviceUserRefFor } from './service-user-ref.ts';
import { stepUpBeforeStart } from '../step-up/guard.ts';
import { INTENT_FIELD } from '../step-up/scope-actions.ts';

function verifyUrlOrigin(verifyUrl: string): string {
  let url: URL;
  try {
    url = new URL(verifyUrl);
  } catch {
    throw new KitError(KitErrorCode.ServiceProtocolError, 'The verification service returned an unusable verifyUrl.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'The verification service returned a verifyUrl that is not http(s).',
    );
  }
  // The same rule as baseUrl: the handoff is posted there, so never in clear across a network.
  if (url.protocol === 'http:' && !isLoopbackHostname(url.hostname)) {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'The verification service returned a plain-http verifyUrl outside loopback; it must use https.',
    );
  }
  return url.origin;
}

/**
 * verifyUrlOrigin, remembering the last origin: the service's verifyUrls share it, and a URL that
 * starts with "<origin>/" has exactly that origin (the first "/" after the host ends the authority),
 * so most starts skip the URL parse.
 */
export function originOfVerifyUrl(): (verifyUrl: string) => string {
  let last: string | undefined;
  return (verifyUrl) => {
    if (last !== undefined && verifyUrl.startsWith(`${last}/`)) return last;
    last = verifyUrlOrigin(verifyUrl);
    return last;
  };
}

/** Where a used auto-submit page goes instead of re-sending its handoff. */
export function startAgainUrl(startAgainPath: string, actionName: string): string {
  return `${startAgainPath}?action=${encodeURIComponent(actionName)}`;
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
  const created = await context.client.createSession(
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

/** The mobile app gets JSON; a browser gets the auto-submit page posting the handoff to verifyUrl. */
function answerStart<Tx>(
  context: KitContext<Tx>,
  res: Response,
  created: CreatedSession,
  startAgain: string,
  originOf: (verifyUrl: string) => string,
  maskedNumber: string | undefined,
): void {
  const { verifyUrl, handoff, expiresInSeconds } = created;
  if (context.platform === 'mobile') {
    setNoStoreHeaders(res);
    res.status(200).json({ verifyUrl, handoff, expiresInSeconds });
    return;
  }
  const nonce = newNonce();
  const page = handoffPage(
    { verifyUrl, handoff, startAgainUrl: startAgain, ...(maskedNumber === undefined ? {} : { maskedNumber }) },
    nonce,
    context.messages.forRequest(res.req),
  );
  sendPage(res, 200, page, nonce, originOf(verifyUrl));
}

/**
 * A typed number that cannot be texted, on the web: the kit's number form back (422) with what the
 * user typed and why, so they correct it. A restart's kept number refused now gets the form empty:
 * a new start, its number typed anew and policed again. False when the error is answered as any other.
 */
function answeredWithNumberForm<Tx>(
  context: KitContext<Tx>,
  req: Request,
  res: Response,
  action: ActionDefinition<Tx>,
  body: Record<string, unknown>,
  error: unknown,
  restarted: boolean,
): boolean {
  const numberProblem =
    isKitError(error, KitErrorCode.InvalidPhoneNumber) || isKitError(error, KitErrorCode.PhoneNumberRefused);
  // Only a typed number can be corrected in the form: a refused stored one gets the error page.
  if (!numberProblem || action.destination !== 'entered' || context.platform !== 'web') return false;
  if (context.errors === 'next') return false;
  const form = restartFormFor(context, req, action.name);
  if (form === undefined) return false;
  logKitError(context, 'start', error);
  const typed = body[ENTERED_NUMBER_FIELD];
  const messages = context.messages.forRequest(req);
  const nonce = newNonce();
  const page = context.pages.enterNumber(
    {
      form,
      entered: typeof typed === 'string' && !restarted ? typed.slice(0, 64) : '',
      message: restarted
        ? messages.errors.kept_number_refused
        : messages.errors[error.code as 'invalid_phone_number' | 'phone_number_refused'],
    },
    nonce,
    messages,
  );
  sendPage(res, error.status, page, nonce);
  return true;
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

/** The start route's own 405 for anything but POST, as a page or JSON. */
function methodNotAllowed<Tx>(context: KitContext<Tx>, format: 'html' | 'json'): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'POST') {
      next();
      return;
    }
    res.setHeader('Allow', 'POST');
    const messages = context.messages.forRequest(req);
    const message = messages.errors.method_not_allowed;
    if (format === 'json') {
      setNoStoreHeaders(res);
      res.status(405).json({ error: 'method_not_allowed', message });
      return;
    }
    const nonce = newNonce();
    sendPage(
      res,
      405,
      context.pages.error({ status: 405, code: 'method_not_allowed', message }, nonce, messages),
      nonce,
    );
  };
}

/** The start-again page: a fresh start form, where the action can be started from it again. */
function startAgainHandler<Tx>(context: KitContext<Tx>) {
  return async (req: Request, res: Response): Promise<void> => {
    const action = pickAction(context, queryOf(req).action);
    const user = await currentUser(context, req);
    // Actions that read form fields (in prepare, or a typed number) are started from a form again.
    const fromOwnForm = action.prepare !== undefined || action.destination === 'entered';
    const restart = user !== null && !fromOwnForm ? restartFormFor(context, req, action.name) : undefined;
    const nonce = newNonce();
    sendPage(res, 200, context.pages.startAgain({ restart }, nonce, context.messages.forRequest(req)), nonce);
  };
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
      if (createdNoSession(error)) await giveBackUnsent(context, receipt, pass);
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
