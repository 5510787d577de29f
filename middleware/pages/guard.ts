/**
 * The integrator's page renderers and locale chooser, guarded: one that throws, or returns a promise
 * where HTML or a tag was expected, is logged with its message and the built-in page (or English)
 * is used instead, so the kit's error path cannot throw.
 */
import { guardSync } from '../deadline.ts';
import { describeError, safeLogger, type KitLogger } from '../logger.ts';
import type { LocaleChooser } from './messages.ts';
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
        log.error({ page: name, err: describeError(error) }, `pages.${name} failed; the built-in page was shown`);
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
      (error) => log.error({ err: describeError(error) }, 'locale failed; the English texts were used'),
    );
}
