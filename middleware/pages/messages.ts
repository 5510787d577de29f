/**
 * Every text the kit shows to end users, in one messages object per language (English is the
 * default). Integrators replace or extend them per locale with the `messages` option and choose
 * the locale per request with `locale(req)` (default: the best `Accept-Language` match). A page's
 * `lang` attribute comes from the messages it was rendered with. The texts' shape is
 * message-types.ts, the English texts english-messages.ts.
 */
import type { Request } from 'express';
import { englishMessages } from './english-messages.ts';
import type { ErrorTextKey, FailureTextKey, KitMessages, KitMessagesInput, TitledText } from './message-types.ts';

export { englishMessages } from './english-messages.ts';
export type { ErrorTextKey, FailureTextKey, KitMessages, KitMessagesInput, TitledText } from './message-types.ts';

/** One locale's input merged over the English defaults (one level deep: each group's missing keys). */
export function completeMessages(tag: string, input: KitMessagesInput): KitMessages {
  const base = englishMessages;
  return {
    ...base,
    ...input,
    lang: input.lang ?? tag,
    handoff: { ...base.handoff, ...input.handoff },
    enterNumber: { ...base.enterNumber, ...input.enterNumber },
    complete: { ...base.complete, ...input.complete },
    failures: { ...base.failures, ...input.failures },
    pending: { ...base.pending, ...input.pending },
    startAgain: { ...base.startAgain, ...input.startAgain },
    error: { ...base.error, ...input.error },
    errors: { ...base.errors, ...input.errors },
    stepUp: { ...base.stepUp, ...input.stepUp },
  } as KitMessages;
}

/** The failure text for a reason: known reasons have their own, anything else the generic one. */
export function failureText(messages: KitMessages, reason: string): TitledText {
  const key = reason as FailureTextKey;
  return Object.hasOwn(messages.failures, key) ? messages.failures[key] : messages.failures.generic;
}

/** The error text for a code; codes without their own text get the client or server fallback. */
export function errorText(messages: KitMessages, code: string, status: number): string {
  const key = code as ErrorTextKey;
  if (Object.hasOwn(messages.errors, key)) return messages.errors[key];
  return status < 500 ? messages.errors.client_error : messages.errors.server_error;
}

/** Picks a request's locale tag (the `locale` option). */
export type LocaleChooser = (req: Request) => string | undefined | null;

export interface MessageCatalog {
  /** The locale tags available, default ('en') first. */
  tags: readonly string[];
  forRequest(req: Request): KitMessages;
}

/**
 * The messages for each request: the integrator's `locale(req)` if given, else the best
 * `Accept-Language` match among the available tags; a region falls back to its language
 * (fr-CA to fr) and anything unknown to English.
 */
export function createMessageCatalog(
  inputs: Readonly<Record<string, KitMessagesInput>> | undefined,
  chooseLocale: LocaleChooser | undefined,
): MessageCatalog {
  const byTag = new Map<string, KitMessages>([['en', englishMessages]]);
  for (const [tag, input] of Object.entries(inputs ?? {})) byTag.set(tag.toLowerCase(), completeMessages(tag, input));
  const tags = [...byTag.keys()];
  const fallback = byTag.get('en') ?? englishMessages;

  function lookup(tag: string | false | undefined | null): KitMessages | undefined {
    if (typeof tag !== 'string' || tag === '') return undefined;
    const lower = tag.toLowerCase();
    return byTag.get(lower) ?? byTag.get(lower.split('-')[0] ?? '');
  }

  // One language and no chooser: every request gets it, so Accept-Language is not negotiated (no
  // negotiator parse per page for an answer known in advance).
  if (byTag.size === 1 && chooseLocale === undefined) return { tags, forRequest: () => fallback };
  return {
    tags,
    forRequest(req) {
      if (chooseLocale !== undefined) return lookup(chooseLocale(req)) ?? fallback;
      return lookup(req.acceptsLanguages(tags)) ?? fallback;
    },
  };
}
