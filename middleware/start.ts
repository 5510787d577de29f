/**
 * The start route: POST only, CSRF-checked, signed-in users only. The server picks the action from
 * the registered list by name, prepares its parameters, creates a fresh session with a fresh
 * state and Idempotency-Key, stores the attempt, and answers the auto-submit page (web) or JSON
 * (mobile). Nothing the browser sends chooses a URL.
 *
 * Also the start-again page (GET), where a used or restored auto-submit page goes instead of
 * re-sending its handoff.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { KitContext } from './context.ts';
import type { ResolvedUser } from './options.ts';
import { csrfToken, verifyCsrf } from './csrf.ts';
import { KitError, KitErrorCode } from './errors.ts';
import { handoffPage, newNonce, sendPage, setNoStoreHeaders, type RestartForm } from './pages.ts';
import { currentUser, route, showAsWritten } from './respond.ts';
import { annotateSpan, countStart } from './telemetry.ts';
import { STATE_PATTERN } from './returned.ts';
import type { ActionDefinition, JsonValue, PrepareContext, VerifyClient } from './types.ts';

/** 32 bytes from node:crypto, base64url: 43 characters, 256 bits. */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

const BODY_LIMIT = '16kb';

function bodyParsers<Tx>(config: KitContext<Tx>): RequestHandler[] {
  const urlencoded = express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: 50 });
  return config.platform === 'mobile' ? [express.json({ limit: BODY_LIMIT, strict: true }), urlencoded] : [urlencoded];
}

/** Runs the body parsers (skipped by them when the app already read the body). */
async function readBody(parsers: RequestHandler[], req: Request, res: Response): Promise<void> {
  for (const parser of parsers) {
    await new Promise<void>((resolve, reject) => {
      parser(req, res, (error?: unknown) => {
        if (error === undefined || error === null) resolve();
        else
          reject(new KitError(KitErrorCode.InvalidActionParams, 'The form could not be read; go back and try again.'));
      });
    });
  }
}

function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

function pickAction<Tx>(config: KitContext<Tx>, value: unknown): ActionDefinition<Tx> {
  const action = typeof value === 'string' ? config.actions.get(value) : undefined;
  if (action === undefined) {
    throw new KitError(
      KitErrorCode.UnknownAction,
      'This verification request names no known action; go back and try again.',
    );
  }
  return action;
}

/**
 * The server-side parameters: from `prepare`, which runs on every start. A restart hands it the
 * finished attempt's stored parameters to check again for the user as they are now, so whatever
 * `prepare` enforces (authorisation, blocklists) cannot be bypassed by restarting an old attempt.
 */
async function paramsFor<Tx>(
  config: KitContext<Tx>,
  req: Request,
  action: ActionDefinition<Tx>,
  user: ResolvedUser,
  restart: unknown,
): Promise<JsonValue> {
  const restartParams =
    restart === undefined ? undefined : await restartedParams(config, action, user.userRef, restart);
  if (action.prepare === undefined) return restartParams ?? null;
  const context: PrepareContext = {
    user: { userRef: user.userRef, destination: user.destination },
    ...(restart === undefined ? {} : { restartParams: restartParams ?? null }),
  };
  let params: JsonValue | undefined;
  try {
    // A KitError from prepare carries the integrator's own text for its users: shown as written.
    params = await action.prepare(req, context);
  } catch (error) {
    throw showAsWritten(error);
  }
  return params === undefined ? null : params;
}

/** The stored parameters of this user's finished (failed or expired) attempt of this action. */
async function restartedParams<Tx>(
  config: KitContext<Tx>,
  action: ActionDefinition<Tx>,
  userRef: string,
  restart: unknown,
): Promise<JsonValue> {
  const previous =
    typeof restart === 'string' && STATE_PATTERN.test(restart)
      ? await config.store.findAttemptByState(restart)
      : undefined;
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
  return previous.params;
}

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
  return url.origin;
}

/** A start-again form for `actionName`, or undefined when none can be offered to this request. */
export function restartFormFor<Tx>(
  config: KitContext<Tx>,
  req: Request,
  actionName: string,
  restartState?: string,
): RestartForm | undefined {
  const startPath = config.routes.start;
  if (startPath === false || config.platform !== 'web' || !config.actions.has(actionName)) return undefined;
  let token: string;
  try {
    token = csrfToken(config, req);
  } catch {
    return undefined;
  }
  return {
    startPath,
    csrfToken: token,
    actionName,
    ...(restartState === undefined ? {} : { restartState }),
  };
}

/** Where a used auto-submit page goes instead of re-sending its handoff. */
export function startAgainUrl(startAgainPath: string, actionName: string): string {
  return `${startAgainPath}?action=${encodeURIComponent(actionName)}`;
}

export function mountStart<Tx>(router: Router, config: KitContext<Tx>, startPath: string): void {
  const { client } = config;
  // resolveKitOptions refuses a web start route without its start-again page.
  const startAgainPath = config.routes.startAgain === false ? startPath : config.routes.startAgain;
  const format = config.platform === 'mobile' ? 'json' : 'html';
  const parsers = bodyParsers(config);

  const start = route(config, 'start', format, async (req: Request, res: Response) => {
    await readBody(parsers, req, res);
    await verifyCsrf(config, req);
    const user = await currentUser(config, req);
    if (user === null) throw new KitError(KitErrorCode.NotSignedIn, 'Sign in to continue.');
    const body = bodyOf(req);
    const action = pickAction(config, body.action);
    const params = await paramsFor(config, req, action, user, body.restart);

    // Abuse limits run before any session exists, so a refusal sends no SMS.
    await config.startLimits?.consume(req, { userRef: user.userRef, destination: user.destination });
    if (config.beforeCreate !== undefined) {
      try {
        await config.beforeCreate(req, { userRef: user.userRef, destination: user.destination, action: action.name });
      } catch (error) {
        throw showAsWritten(error);
      }
    }

    const state = newState();
    const created = await client.createSession(
      {
        returnUrl: config.returnUrl,
        destination: user.destination,
        operationSensitivity: action.operationSensitivity,
        userRef: user.userRef,
        state,
        platform: config.platform,
      },
      randomUUID(),
    );
    const origin = verifyUrlOrigin(created.verifyUrl);
    const now = config.now();
    await config.store.insertAttempt({
      state,
      sessionId: created.sessionId,
      userRef: user.userRef,
      action: action.name,
      params,
      // What the code is sent to is what a verification proves: fulfil receives exactly this.
      destination: user.destination,
      returnTo: action.successPath,
      sensitivity: action.operationSensitivity,
      platform: config.platform,
      createdAt: now,
      nextCheckAt: now + config.sweep.firstCheckAfterMs,
    });
    config.logger.info(
      { route: 'start', action: action.name, sessionId: created.sessionId, replayed: created.replayed },
      'verification started',
    );
    countStart({ action: action.name, platform: config.platform });
    annotateSpan({ 'verify_kit.action': action.name, 'verify_kit.session_id': created.sessionId });

    if (config.platform === 'mobile') {
      setNoStoreHeaders(res);
      res
        .status(200)
        .json({ verifyUrl: created.verifyUrl, handoff: created.handoff, expiresInSeconds: created.expiresInSeconds });
      return;
    }
    const nonce = newNonce();
    const page = handoffPage(
      {
        verifyUrl: created.verifyUrl,
        handoff: created.handoff,
        startAgainUrl: startAgainUrl(startAgainPath, action.name),
      },
      nonce,
      config.messages.forRequest(req),
    );
    sendPage(res, 200, page, nonce, origin);
  });

  router.all(startPath, (req, res, next) => {
    if (req.method === 'POST') {
      next();
      return;
    }
    res.setHeader('Allow', 'POST');
    const nonce = newNonce();
    const messages = config.messages.forRequest(req);
    const message = messages.errors.method_not_allowed;
    if (format === 'json') {
      setNoStoreHeaders(res);
      res.status(405).json({ error: 'method_not_allowed', message });
    } else {
      const page = config.pages.error({ status: 405, code: 'method_not_allowed', message }, nonce, messages);
      sendPage(res, 405, page, nonce);
    }
  });
  router.post(startPath, start);

  if (config.platform === 'web') {
    router.get(
      startAgainPath,
      route(config, 'start-again', 'html', async (req: Request, res: Response) => {
        const action = pickAction(config, req.query.action);
        const user = await currentUser(config, req);
        // Actions that read form fields in prepare must be started from the integrator's form again.
        const restart =
          user !== null && action.prepare === undefined ? restartFormFor(config, req, action.name) : undefined;
        const nonce = newNonce();
        sendPage(res, 200, config.pages.startAgain({ restart }, nonce, config.messages.forRequest(req)), nonce);
      }),
    );
  }
}
