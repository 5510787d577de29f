/**
 * The integrator's page renderers, locale chooser and text functions, guarded: one that throws, or
 * returns a promise where HTML, a tag or a text was expected, is logged with its message and the
 * built-in page (or English) is used instead, so the kit's error path cannot throw. A KitError one
 * throws is in the integrator's words (it may name a number): logged masked, as its other errors.
 */
import { guardSync } from '../deadline.ts';
import { describeError, safeLogger, thrownByIntegratorCode, type KitLogger } from '../logger.ts';
import { englishMessages, type KitMessagesInput, type LocaleChooser } from './messages.ts';
import { defaultPages, type PageRenderers } from './pages.ts';

type Renderer = (ctx: never, nonce: string, messages: never) => string;

/** The given renderers over the defaults, each falling back to the built-in one when it fails. */
export function guardPages(given: Partial<PageRenderers> | undefined, logger: KitLogger): PageRenderers {
  const log = safeLogger(logger);
  const pages: Record<string, Renderer> = { ...defaultPages };
  for (const [name, custom] of Object.entries(given ?? {}) as [keyof PageRenderers, Renderer | undefined][]) {
    if (typeof custom !== 'function') continue;
    const builtIn = defaultPages[name] as Renderer;
    pages[name] = (ctx, nonce, messages) => {
      const failed = (error: unknown) =>
        log.error(
          { page: name, err: describeError(thrownByIntegratorCode(error)) },
          `pages.${name} failed; the built-in page was shown`,
        );
      const html = guardSync(() => custom(ctx, nonce, messages), failed);
      if (typeof html === 'string') return html;
      if (html !== undefined) failed(new TypeError(`returned ${typeof html} instead of HTML`));
      return builtIn(ctx, nonce, messages);
    };
  }
  return pages as unknown as PageRenderers;
}

/** The locale chooser; a failing one picks nothing (English, or the Accept-Language match is not tried). */
export function guardLocale(locale: LocaleChooser | undefined, logger: KitLogger): LocaleChooser | undefined {
  if (locale === undefined) return undefined;
  const log = safeLogger(logger);
  return (req) =>
    guardSync(
      () => locale(req),
      (error) =>
        log.error({ err: describeError(thrownByIntegratorCode(error)) }, 'locale failed; the English texts were used'),
    );
}

type TextFunction = (...args: never[]) => unknown;

/** One text function, falling back to the English one when it fails or gives anything but a text. */
function guardText(name: string, given: TextFunction, english: TextFunction, log: KitLogger): TextFunction {
  return (...args) => {
    const failed = (error: unknown) =>
      log.error(
        { text: name, err: describeError(thrownByIntegratorCode(error)) },
        `messages: ${name} failed; the English text was used`,
      );
    const text = guardSync(() => given(...args), failed);
    if (typeof text === 'string') return text;
    if (text !== undefined) failed(new TypeError(`returned ${typeof text} instead of a text`));
    return english(...args);
  };
}

/**
 * Each locale's texts guarded at every depth (retryAfter, stepUp.text, failures.otp_locked.title):
 * each is read once, a getter that throws (a lazy translation) is logged and left out, a text
 * function is guarded, and a text of the wrong kind (a text where a function is expected, or the
 * reverse) is logged and left out; what is left out, the English text fills in.
 */
export function guardMessages(
  inputs: Readonly<Record<string, KitMessagesInput>> | undefined,
  logger: KitLogger,
): Readonly<Record<string, KitMessagesInput>> | undefined {
  if (inputs === undefined || typeof inputs !== 'object') return inputs;
  const log = safeLogger(logger);
  const english = englishMessages as unknown as Record<string, unknown>;
  const guardLevel = (given: Record<string, unknown>, defaults: Record<string, unknown>, path: string) => {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(given)) {
      const fallback = defaults[key];
      let unread = false;
      const value = guardSync(
        () => given[key],
        (error) => {
          unread = true;
          log.error(
            { text: `${path}${key}`, err: describeError(thrownByIntegratorCode(error)) },
            `messages: ${path}${key} could not be read; the English text was used`,
          );
        },
      );
      if (unread) continue;
      if (typeof value === 'function' && typeof fallback === 'function') {
        out[key] = guardText(`${path}${key}`, value as TextFunction, fallback as TextFunction, log);
      } else if (isObject(value) && isObject(fallback)) {
        const guarded = guardLevel(value, fallback, `${path}${key}.`);
        // A group is completed by completeMessages; a titled text below one (a failure's) here.
        out[key] = path === '' ? guarded : { ...fallback, ...guarded };
      } else if (isWrongKind(value, fallback)) {
        // Left out, the default fills it in: a text where a function is called would fail every page showing it.
        if (value !== undefined) log.error({ text: `${path}${key}` }, wrongKindMessage(`${path}${key}`, fallback));
      } else {
        out[key] = value;
      }
    }
    return out;
  };
  return Object.fromEntries(
    Object.entries(inputs).map(([tag, input]) => [
      tag,
      isObject(input) ? (guardLevel(input, english, '') as KitMessagesInput) : input,
    ]),
  );
}

/** A text given where the English one is a function, or anything but a text where it is a text. */
function isWrongKind(value: unknown, english: unknown): boolean {
  return (typeof english === 'function' || typeof english === 'string') && typeof value !== typeof english;
}

function wrongKindMessage(name: string, english: unknown): string {
  const kind = typeof english === 'function' ? 'a function returning a text' : 'a text';
  return `messages: ${name} is not ${kind}; the default text was used`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
