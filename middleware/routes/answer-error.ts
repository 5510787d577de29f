/**
 * How the kit's routes answer an error: a page (or JSON) with the KitError's status, or, with
 * `errors: 'next'`, Express's error handler. Users see the text for the error's code in their
 * language (messages.ts); the real message goes to the logger. Anything that is not a KitError
 * (the integrator's code threw it) is a 500 with the kit's own text; the error path never throws.
 */
import type { NextFunction, Request, Response } from 'express';
import type { KitContext } from '../context.ts';
import { isKitError, KitError, KitErrorCode, redactSecretFragments } from '../errors.ts';
import { MAX_DURATION_SECONDS } from '../limits/start-limits.ts';
import { describeError, loggedMessage } from '../logger.ts';
import { englishMessages, errorText, type ErrorTextKey, type KitMessages } from '../pages/messages.ts';
import { defaultPages } from '../pages/pages.ts';
import { sendPage, setNoStoreHeaders } from '../pages/page-headers.ts';
import { newNonce } from './state.ts';
import { inSpan } from '../telemetry.ts';
import { serviceRefusalFix } from './service-refusal.ts';

/** KitErrors the integrator's own code (prepare, beforeCreate) threw: their text is meant for users. */
const writtenForUsers = new WeakSet<KitError>();

/** Marks a KitError from the integrator's hooks so error pages show its message as written. */
export function showAsWritten(error: unknown): unknown {
  if (isKitError(error) && error.status < 500) writtenForUsers.add(error);
  return error;
}

/** KitErrors users are shown another text than their code's; the code answered stays theirs. */
const shownWithText = new WeakMap<KitError, ErrorTextKey>();

/** Shows a KitError with the text for `key` (a refusal whose usual text asks for what the page cannot take). */
export function showWithText(error: KitError, key: ErrorTextKey): KitError {
  shownWithText.set(error, key);
  return error;
}

/**
 * The text users see for an error, in the request's language: the kit's text for the code (or the
 * one showWithText chose; the real message goes to the logger), or the integrator's own text for
 * errors its hooks threw.
 */
export function userMessage(error: KitError, messages: KitMessages): string {
  // Redacted again: the app may have completed its message after the constructor redacted it.
  if (writtenForUsers.has(error)) return redactSecretFragments(String(error.message));
  const text = errorText(messages, shownWithText.get(error) ?? error.code, error.status);
  const seconds = secondsToWait(error);
  return seconds === undefined ? text : `${text} ${messages.retryAfter(Math.max(1, seconds))}`;
}

/**
 * Whole seconds until a refusal (start budgets, the service's own 429) may be tried again, or
 * undefined when it names no usable wait: an app's own limits may throw a KitError whose
 * `retryAfterSeconds` is NaN, Infinity, a word or 1e21, and neither `Retry-After` (whole
 * delta-seconds) nor the page may say "NaN" or "1e+21".
 */
function secondsToWait(error: KitError): number | undefined {
  const retryable = error.code === KitErrorCode.RateLimited || error.code === KitErrorCode.ServiceBusy;
  if (!retryable || error.retryAfterSeconds === undefined) return undefined;
  const seconds = Number(error.retryAfterSeconds);
  if (!Number.isFinite(seconds)) return undefined;
  // At most the longest window a start budget may have (a year).
  return Math.min(MAX_DURATION_SECONDS, Math.max(0, Math.ceil(seconds)));
}

/** One line: errors at error level (a refusal caused by the kit's set-up says how to fix it), the rest at warn. */
export function logKitError<Tx>(context: KitContext<Tx>, route: string, error: KitError): void {
  const fields = {
    route,
    code: error.code,
    status: error.status,
    serviceErrorCode: error.serviceErrorCode,
    serviceStatus: error.serviceStatus,
  };
  const fix = serviceRefusalFix(context, error);
  const message = loggedMessage(error);
  if (fix !== undefined) context.logger.error(fields, `${message} ${fix}`);
  else if (error.status >= 500) context.logger.error(fields, message);
  else context.logger.warn(fields, message);
}

/**
 * Answers an error; never throws. Anything that is not a KitError (the integrator's own code threw
 * it) is logged with its message and answered as a 500, never as Express's default page with a
 * stack trace; `errors: 'next'` hands it to the app's error handler instead.
 */
export function answerError<Tx>(
  context: KitContext<Tx>,
  route: string,
  format: 'html' | 'json',
  error: unknown,
  res: Response,
  next: NextFunction,
): void {
  try {
    // Not ended here: an answer may still be finishing (express-session holds its end until saved).
    if (res.headersSent) {
      logAfterAnswer(context, route, error);
      return;
    }
    answerKitError(context, route, format, asKitError(context, route, error), res, next);
  } catch {
    // The error path itself failed (a broken logger, a closed socket): the built-in English page.
    try {
      lastResort(res, format);
    } catch {
      res.destroy();
    }
  }
}

/**
 * An error raised once the request was answered (the integrator's code failing after its own
 * answer, or after the kit's): the answer stands and the error is logged once, described. It never
 * goes to `next(err)`: the app's error handler would answer a second time ("headers already
 * sent"), and Express prints what reaches its own handler with its stack.
 */
export function logAfterAnswer<Tx>(context: KitContext<Tx>, route: string, error: unknown): void {
  context.logger.error(
    { route, err: describeError(error) },
    'an error after the request was answered; the answer stands',
  );
}

/** The integrator's (or any unexpected) error as the KitError users are answered with; logged here. */
function asKitError<Tx>(context: KitContext<Tx>, route: string, error: unknown): KitError {
  if (isKitError(error)) return error;
  context.logger.error({ route, err: describeError(error) }, 'unexpected error in the verification kit');
  const wrapped = new KitError(KitErrorCode.HookFailed, 'An unexpected error stopped this request.', { cause: error });
  passOnAsIs.add(wrapped);
  return wrapped;
}
/** Errors `errors: 'next'` passes on as they were thrown, not as the kit's wrapper. */
const passOnAsIs = new WeakSet<KitError>();

function answerKitError<Tx>(
  context: KitContext<Tx>,
  route: string,
  format: 'html' | 'json',
  error: KitError,
  res: Response,
  next: NextFunction,
): void {
  if (!passOnAsIs.has(error)) logKitError(context, route, error);
  if (context.errors === 'next') {
    next(passOnAsIs.has(error) ? error.cause : error);
    return;
  }
  const seconds = secondsToWait(error);
  if (seconds !== undefined) res.setHeader('Retry-After', String(seconds));
  const messages = context.messages.forRequest(res.req);
  const message = userMessage(error, messages);
  if (format === 'json') {
    setNoStoreHeaders(res);
    res.vary('Accept-Language');
    res.status(error.status).json({ error: error.code, message });
    return;
  }
  const nonce = newNonce();
  const text = shownWithText.get(error);
  const shown = { status: error.status, code: error.code, message, ...(text === undefined ? {} : { text }) };
  const page = context.pages.error(shown, nonce, messages);
  sendPage(res, error.status, page, nonce);
}

/** The built-in English 500, with nothing of the context. */
function lastResort(res: Response, format: 'html' | 'json'): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const message = englishMessages.errors.server_error;
  if (format === 'json') {
    setNoStoreHeaders(res);
    res.status(500).json({ error: 'server_error', message });
    return;
  }
  const nonce = newNonce();
  sendPage(res, 500, defaultPages.error({ status: 500, code: 'server_error', message }, nonce, englishMessages), nonce);
}

/** Wraps an async route so a rejection is answered by answerError. */
export function route<Tx>(
  context: KitContext<Tx>,
  name: string,
  format: 'html' | 'json',
  handler: (req: Request, res: Response) => Promise<void>,
) {
  const spanName = `verify_kit.${name.replaceAll('-', '_')}`;
  // The same for every request of the route: built once.
  const attributes = { 'verify_kit.route': name, 'verify_kit.platform': context.platform };
  return (req: Request, res: Response, next: NextFunction): void => {
    inSpan(spanName, attributes, () => handler(req, res)).catch((error: unknown) =>
      answerError(context, name, format, error, res, next),
    );
  };
}
