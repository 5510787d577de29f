/**
 * The one logger type of the kit, the sweep, the worker and the job (pino-compatible), the default
 * logger (one readable line per event in development, quiet in production), and the helpers every
 * module uses to log without leaking: errors are described by code and message only.
 */
import { isThenable, runDetached, type LateRejectionReporter } from './deadline.ts';
import { environmentSecrets, KitError, redactSecretFragments } from './errors.ts';
import { maskNumbersInText } from './numbers/mask-number.ts';
import { cutForPrinting, withoutUrlPasswords } from './printable-errors.ts';

/** Pino-compatible: `logger.info({ ...fields }, 'message')`. */
export interface KitLogger {
  info(obj: Record<string, unknown>, msg?: string): void;
  warn(obj: Record<string, unknown>, msg?: string): void;
  error(obj: Record<string, unknown>, msg?: string): void;
}

type Level = keyof KitLogger;

/** Logs nothing. */
export const silentLogger: KitLogger = { info() {}, warn() {}, error() {} };

/** The environment switch of the default logger: `VERIFY_KIT_LOG=console` (or on, 1, true) or `off`. */
export const LOG_SWITCH = 'VERIFY_KIT_LOG';

const NEEDS_QUOTES = /[\s"=\u0000-\u001f\u007f-\u009f]|^$/;
/** C1 controls and DEL, which JSON.stringify leaves raw (a terminal takes \u009b as an escape). */
const RAW_AFTER_JSON = /[\u007f-\u009f]/g;

/** JSON text with no control character left raw: a service's text must not drive the terminal. */
function quoted(value: unknown): string | undefined {
  return JSON.stringify(value)?.replace(RAW_AFTER_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return NEEDS_QUOTES.test(value) ? (quoted(value) ?? value) : value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return quoted(value) ?? String(value);
}

/** `key=value` pairs; a nested object (an error's description) one level deep as `err.code=...`. */
function formatFields(obj: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(obj).flatMap(([key, value]) => {
    if (value === undefined) return [];
    if (prefix === '' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return formatFields(value as Record<string, unknown>, `${key}.`);
    }
    return [`${prefix}${key}=${formatValue(value)}`];
  });
}

/** One line: `[verify-kit] ERROR message key=value ...` (the level is shown for warn and error only). */
export function formatLogLine(level: Level, obj: Record<string, unknown>, msg?: string): string {
  const head = level === 'info' ? '[verify-kit]' : `[verify-kit] ${level.toUpperCase()}`;
  return [head, ...(msg === undefined ? [] : [msg]), ...formatFields(obj)].join(' ');
}

/** The longest line a console logger prints: an error of megabytes is no line a log keeps whole. */
export const MAX_LOG_LINE = 4_000;

/** Where a console logger's lines go. */
export type LineWriter = (level: Level, line: string) => void;

/** stderr for every level: stdout stays the program's own (the sweep job's JSON lines). */
const toConsole: LineWriter = (_level, line) => {
  console.error(line);
};

/**
 * A logger printing one readable line per event (`formatLogLine`). A line never shows a secret of
 * `env`, nor any run of 8 characters of one, nor a URL's password: a store's, an action's or a ready
 * client's error may quote the database URL, a password the environment holds or the start of the
 * client secret, and a sweep job's stderr goes to the file its JSON lines go to.
 */
export function createConsoleLogger(
  write: LineWriter = toConsole,
  env: Readonly<Record<string, string | undefined>> = process.env,
): KitLogger {
  const secrets = environmentSecrets(env);
  const at = (level: Level) => (obj: Record<string, unknown>, msg?: string) =>
    // Cut once redacted: a secret cut in two escapes a redaction that looks for it whole.
    write(
      level,
      cutForPrinting(withoutUrlPasswords(redactSecretFragments(formatLogLine(level, obj, msg), secrets)), MAX_LOG_LINE),
    );
  return { info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * The logger of a kit given none: printed lines in development, nothing when NODE_ENV is
 * `production` or `test`. `VERIFY_KIT_LOG=console` prints anywhere; `VERIFY_KIT_LOG=off` never.
 */
export function defaultLogger(env: NodeJS.ProcessEnv = process.env, write?: LineWriter): KitLogger {
  const switched = env[LOG_SWITCH]?.trim().toLowerCase();
  if (switched === 'off' || switched === '0' || switched === 'false') return silentLogger;
  const on = switched === 'console' || switched === 'on' || switched === '1' || switched === 'true';
  if (!on && (env.NODE_ENV === 'production' || env.NODE_ENV === 'test')) return silentLogger;
  return createConsoleLogger(write, env);
}

const guarded = new WeakSet<KitLogger>();
const ignore = () => {
  // nothing sensible to do: logging is best effort
};

/**
 * The logger with every call guarded, sync and async: a logger that throws, or whose method
 * returns a promise that rejects, never disturbs a request or a sweep, nor reaches the process.
 * Every logger the kit is given passes through here once.
 */
export function safeLogger(logger: KitLogger): KitLogger;
export function safeLogger(logger: KitLogger | undefined): KitLogger | undefined;
export function safeLogger(logger: KitLogger | undefined): KitLogger | undefined {
  if (logger === undefined || guarded.has(logger)) return logger;
  const guard =
    (level: Level) =>
    (obj: Record<string, unknown>, msg?: string): void =>
      runDetached(() => logger[level](obj, msg), ignore);
  const safe: KitLogger = { info: guard('info'), warn: guard('warn'), error: guard('error') };
  guarded.add(safe);
  return safe;
}

/**
 * Logs, described, why a callback failed after its deadline had already counted it as failed: the
 * answer (a `hook_failed` page, a refused start) stands, and the deadline's own message never says
 * what went wrong ("database connection refused").
 */
export function lateRejectionLogger(logger: KitLogger): LateRejectionReporter {
  return (name, error) => {
    logger.error({ hook: name, err: describeError(error) }, `${name} rejected after its deadline`);
  };
}

/**
 * A loggable description of an error: code and message only (never a cause with headers), the
 * client secret redacted, and any part of it a message cut short kept, no URL's password (a
 * store's error may quote the database URL), and, in any error but the kit's own, each run that may
 * be a phone number masked (a hook's may name the user's: "no page for •• 11"). Never throws,
 * whatever was thrown (an object without a prototype, a throwing getter): the integrator's code may
 * throw anything, and the logging path must hold.
 */
export function describeError(error: unknown): Record<string, unknown> {
  try {
    if (error instanceof KitError) {
      return {
        code: error.code,
        // The kit's own text: it never repeats a number, and states limits ("to 2147483") read as one.
        message: withoutUrlPasswords(loggedMessage(error)),
        ...(error.serviceStatus === undefined ? {} : { serviceStatus: error.serviceStatus }),
      };
    }
    if (error instanceof Error) return { name: textOf(error.name), message: messageOf(error) };
    return { message: textOf(error) };
  } catch {
    return { message: 'an error that cannot be read' };
  }
}

/** KitErrors the integrator's code threw (a hook's refusal in its own words, which may name the user's number). */
const thrownByIntegrator = new WeakSet<KitError>();

/**
 * KitErrors in the kit's own words that may reach the kit through the integrator's code (the start
 * limits' refusal, from `createStartLimits` the app may call itself): never masked, as their limits
 * ("try again in 2592000 s") read as numbers.
 */
const writtenByKit = new WeakSet<KitError>();

/** Marks a KitError as the kit's own text, logged as written wherever it is thrown from; returns it. */
export function inKitWords(error: KitError): KitError {
  writtenByKit.add(error);
  return error;
}

/**
 * Marks a KitError the integrator's code threw, so that it is logged as its other errors are; returns
 * it. Never throws: it runs in the kit's failure handlers, and a value that throws at every look (a
 * revoked Proxy, a `then` getter that throws) would otherwise take the handler down with it (a
 * request never answered, a rejection nothing handles).
 */
export function thrownByIntegratorCode(error: unknown): unknown {
  try {
    if (error instanceof KitError && !writtenByKit.has(error)) thrownByIntegrator.add(error);
    handleThrownPromise(error);
  } catch {
    // Nothing to mark on a value that cannot be looked at: describeError says so when it is logged.
  }
  return error;
}

/**
 * A promise thrown rather than returned (`throw fetch(...)`) is a failure like any thrown value; its
 * own rejection is handled, as nothing else awaits it and Node would report it unhandled.
 */
function handleThrownPromise(error: unknown): void {
  if (!isThenable(error)) return;
  try {
    error.then(undefined, () => undefined);
  } catch {
    // A `then` that throws leaves no rejection to handle.
  }
}

/** Calls the integrator's code, marking a KitError it throws or rejects with (thrownByIntegratorCode). */
export function markingErrors<T>(hook: () => T | PromiseLike<T>): T | PromiseLike<T> {
  let result: T | PromiseLike<T>;
  try {
    result = hook();
  } catch (error) {
    throw thrownByIntegratorCode(error);
  }
  if (!isThenable(result)) return result;
  return Promise.resolve(result).catch((error: unknown) => {
    throw thrownByIntegratorCode(error);
  });
}

/**
 * A KitError's message as logged: the kit's own as written (it never repeats a number, and states
 * limits a masking would read as one); one the integrator's code threw with each run that may be a
 * phone number masked, as any error of its code. Redacted again: a message completed after the
 * constructor redacted it (`error.message += key`, a subclass setting its own) may quote the secret.
 */
export function loggedMessage(error: KitError): string {
  const message = redactSecretFragments(String(error.message));
  return thrownByIntegrator.has(error) ? maskNumbersInText(message) : message;
}

/** How many of an AggregateError's errors a description quotes. */
const INNER_ERRORS_QUOTED = 3;

/**
 * An error's message; an empty one told by its code and the errors it gathers. Node's connect to a
 * host name with two addresses (`localhost` on a dual-stack machine) fails with an AggregateError
 * whose message is empty: described by its message alone, "the sweep failed" would say nothing.
 */
function messageOf(error: Error): string {
  const own = textOf(error.message);
  if (own !== '') return own;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  const inner = Array.isArray(errors)
    ? errors.slice(0, INNER_ERRORS_QUOTED).map((e) => (e instanceof Error ? textOf(e.message) : textOf(e)))
    : [];
  if (Array.isArray(errors) && errors.length > INNER_ERRORS_QUOTED) {
    inner.push(`${errors.length - INNER_ERRORS_QUOTED} more`);
  }
  const parts = [typeof code === 'string' ? textOf(code) : '', inner.join('; ')].filter((part) => part !== '');
  return parts.join(': ');
}

/** `value` as redacted text; a value String() refuses (no prototype) by its type tag. */
function textOf(value: unknown): string {
  let text: string;
  try {
    text = String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  // Masked last: a secret's digits masked first would leave the rest of it unrecognised. Any run of
  // seven digits may be a number the integrator's code quotes; a long id masked with it is the cost.
  return maskNumbersInText(withoutUrlPasswords(redactSecretFragments(text)));
}
