/**
 * Every text the kit shows to end users, in one messages object per language (English is the
 * default). Integrators replace or extend them per locale with the `messages` option and choose
 * the locale per request with `locale(req)` (default: the best `Accept-Language` match). A page's
 * `lang` attribute comes from the messages it was rendered with.
 */
import type { Request } from 'express';
import type { KitErrorCode } from '../errors.ts';
import type { KnownFailureReason } from '../types.ts';

export interface TitledText {
  title: string;
  text: string;
}

/**
 * Failure texts: the service's known reasons, the kit's own expiry, an attempt superseded by a
 * newer one of the same action, and the generic one for anything else.
 */
export type FailureTextKey = KnownFailureReason | 'expired' | 'superseded' | 'generic';

/**
 * Error texts by KitError code, plus the start route's 405, the refusal of the number the app holds
 * for the user (`phone_number_refused` where no number can be typed), of a restart's kept number (the
 * number form back, empty), a kept form sent back under another resource than its own (a
 * `step_up_intent_unusable` still open there) and the fallbacks for unlisted codes.
 */
export type ErrorTextKey =
  | KitErrorCode
  | 'method_not_allowed'
  | 'stored_number_refused'
  | 'kept_number_refused'
  | 'step_up_intent_other_resource'
  | 'client_error'
  | 'server_error';

/** Every text of the kit's pages, in one language. */
export interface KitMessages {
  /** BCP 47 language tag of these texts; every page's `<html lang>`. */
  lang: string;
  /** Text direction of the language. */
  dir: 'ltr' | 'rtl';
  /** Label of the button that starts a new verification (new session, new state). */
  startNew: string;
  nothingChanged: string;
  handoff: { title: string; text: string; continue: string };
  /** Where the code goes, on the pages of an action that texts a typed number: masked ("•• 78"). */
  codeGoesTo: (maskedNumber: string) => string;
  /** The kit's form for a typed number, shown again (422) when the number cannot be texted. */
  enterNumber: { title: string; label: string; hint: string; send: string };
  complete: TitledText;
  failures: Record<FailureTextKey, TitledText>;
  pending: {
    title: string;
    /** The page's status while the kit waits for the service (as rendered: right without JavaScript). */
    waiting: string;
    /** Announced in the status region once the page's script checks by itself. */
    checking: string;
    /** Shown once the kit stopped checking; the sweep finishes the attempt. */
    stoppedTitle: string;
    stopped: string;
    /** Announced when a check found a result, just before the page shows it. */
    resultReady: string;
    /** The visible control that checks again (works without JavaScript). */
    checkAgain: string;
  };
  startAgain: { title: string; heading: string; text: string };
  error: { title: string; heading: string };
  errors: Record<ErrorTextKey, string>;
  /** Appended to the rate-limit and busy texts when the wait is known. */
  retryAfter: (seconds: number) => string;
  /** Step-up (requireRecentVerification): the pages in front of an integrator's guarded route. */
  stepUp: {
    /** "Confirm it's you": no SMS is sent until the user presses `send`. */
    title: string;
    /** Where the code goes: the user's masked number, its last two digits ("•• 01"). */
    text: (maskedNumber: string) => string;
    /** What the guarded request is for, when its scope has a label. */
    purpose: (label: string) => string;
    send: string;
    /** The user came back verified but the confirmation does not fit this request. */
    tooOld: string;
    otherResource: string;
    /** After the verification: the kept form, shown before it runs. */
    confirmTitle: string;
    confirmText: (label: string) => string;
    confirm: string;
    /** The guarded page was opened from another site: nothing was kept until the user continues here. */
    fromElsewhere: string;
    continue: string;
    /** The user has no phone number: the guarded page cannot be opened (no silent bypass). */
    unenrolledTitle: string;
    /**
     * The title of the page for a kept request already run, expired or from another browser
     * (`errors.step_up_intent_unusable` says which): nothing went wrong, there is nothing left to do.
     */
    unusableTitle: string;
    unenrolled: string;
  };
}

/** What an integrator passes for one locale: any subset, merged over the English defaults. */
export type KitMessagesInput = {
  [K in keyof KitMessages]?: KitMessages[K] extends (...args: never[]) => unknown
    ? KitMessages[K]
    : KitMessages[K] extends object
      ? Partial<KitMessages[K]>
      : KitMessages[K];
};

const START_AGAIN = 'Start again from the page you came from.';
const SERVER_PROBLEM =
  'The verification could not be completed because of a problem on our side. ' +
  'Nothing was changed; please try again later.';

/** The kit's English texts, the defaults every locale is merged over. */
export const englishMessages: KitMessages = {
  lang: 'en',
  dir: 'ltr',
  startNew: 'Start a new verification',
  nothingChanged: 'Nothing was changed.',
  handoff: {
    title: 'Continue to verification',
    text: 'You are being taken to the verification page. If nothing happens, press Continue.',
    continue: 'Continue',
  },
  codeGoesTo: (maskedNumber) => `The code goes to the number ending ${maskedNumber}.`,
  enterNumber: {
    title: 'Enter your phone number',
    label: 'Phone number',
    hint: 'We will text a code to this number. Outside your own country, start with + and the country code.',
    send: 'Text me a code',
  },
  complete: {
    title: 'Verification complete',
    text:
      'This verification has been processed. If you started it, sign in to the account you started it from to see ' +
      'the result.',
  },
  failures: {
    otp_locked: {
      title: 'Too many incorrect codes',
      text: 'The code was entered incorrectly too many times, so this verification was locked. You can start a new one.',
    },
    device_changed: {
      title: 'Verification moved to another device',
      text:
        'The verification was continued on a different device or browser than the one it started on, so it was ' +
        'stopped for your safety. Start again on this device.',
    },
    session_binding_failed: {
      title: 'Verification could not be tied to this browser',
      text:
        'The verification page could not confirm it was opened from this browser (for example it was opened from a ' +
        'copied link). Start again from this page.',
    },
    expired: {
      title: 'Verification expired',
      text: 'This verification was not completed in time. You can start a new one.',
    },
    superseded: {
      title: 'A newer request replaced this one',
      text:
        'You confirmed a newer request of the same kind, and that one was applied. ' +
        'This older request will never be applied.',
    },
    generic: { title: 'Verification failed', text: 'The verification did not succeed. You can start a new one.' },
  },
  pending: {
    title: 'Confirming your verification',
    waiting:
      'Waiting for the verification service to confirm the result. Press Check again in a few seconds to see it.',
    checking:
      'Waiting for the verification service to confirm the result. This page checks again by itself every few ' +
      'seconds.',
    stoppedTitle: 'Still confirming your verification',
    stopped:
      'The verification service has not confirmed the result yet. You do not need to wait here: if you completed ' +
      'the verification, it will be finished in the background within a few minutes and you will see the result in ' +
      'your account.',
    resultReady: 'The result is in. Showing it now.',
    checkAgain: 'Check again',
  },
  startAgain: {
    title: 'Start the verification again',
    heading: 'This verification page was already used',
    text: 'For your security a verification page is opened only once. Start a new verification to continue.',
  },
  error: { title: 'Verification problem', heading: 'Something went wrong with the verification' },
  errors: {
    invalid_options: SERVER_PROBLEM,
    mounted_at_wrong_path: SERVER_PROBLEM,
    not_signed_in: 'Sign in to continue.',
    csrf_failed: 'The form has expired or was not sent from this site; reload the page and try again.',
    unknown_action: 'This verification request names no known action; go back and try again.',
    invalid_action_params: 'The form could not be accepted; go back, check it and try again.',
    invalid_phone_number:
      'This is not a phone number we can text. Check it; for a number of another country, start with + and its country code.',
    phone_number_refused: 'We cannot send a code to this number. Enter another mobile number.',
    stored_number_refused:
      'We cannot send a code to the phone number on your account. Change the number in your account, or contact support.',
    kept_number_refused: 'We cannot send a code to the number this verification used. Enter another mobile number.',
    rate_limited: 'Too many verification attempts.',
    invalid_return_params: `This verification link is incomplete or malformed. ${START_AGAIN}`,
    unknown_attempt: `No verification attempt matches this link. ${START_AGAIN}`,
    session_mismatch: `This link does not belong to the verification it names. ${START_AGAIN}`,
    service_response_mismatch: 'The verification could not be confirmed, so nothing was changed. Please start again.',
    service_unavailable: 'The verification service cannot be reached right now. Please try again in a moment.',
    service_busy: 'The verification service is busy right now. Nothing was sent or counted; please try again shortly.',
    service_rejected: SERVER_PROBLEM,
    service_protocol_error: SERVER_PROBLEM,
    fulfil_failed: SERVER_PROBLEM,
    hook_failed: SERVER_PROBLEM,
    step_up_intent_unusable:
      'This request was already carried out, has expired, or was started in another browser. Nothing was changed now.',
    step_up_intent_other_resource:
      'This request was made for another account or workspace than the one open now. Switch back to that one to confirm it. Nothing was changed.',
    step_up_upload_refused:
      'This form cannot be confirmed with a file attached. Send it without the file, or upload the file after confirming.',
    store_unavailable: 'This cannot be completed right now. Please try again in a moment.',
    method_not_allowed: 'Verification is started by submitting a form (POST), not by opening a link.',
    client_error: 'That request could not be accepted; go back and try again.',
    server_error: SERVER_PROBLEM,
  },
  retryAfter: (seconds) =>
    seconds < 90 ? `Try again in ${seconds} seconds.` : `Try again in ${Math.ceil(seconds / 60)} minutes.`,
  stepUp: {
    title: 'Confirm it’s you',
    text: (maskedNumber) => `To continue, confirm it’s you with a code we text to your number ${maskedNumber}.`,
    purpose: (label) => `You asked to: ${label}.`,
    send: 'Text me a code',
    tooOld:
      'Your confirmation took longer than this page allows, so it cannot be used here. Confirm again to continue.',
    otherResource: 'Your confirmation was for something else, so it cannot be used here. Confirm again to continue.',
    confirmTitle: 'Confirm your request',
    confirmText: (label) => `You confirmed it’s you. Now confirm that you want to: ${label}.`,
    confirm: 'Confirm',
    fromElsewhere: 'You came here from another site. Continue on this site to confirm it’s you.',
    continue: 'Continue',
    unenrolledTitle: 'A phone number is needed',
    unusableTitle: 'This request is no longer open',
    unenrolled:
      'This page needs a confirmation by text message, and your account has no phone number yet. Add one to your account, then try again.',
  },
};

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
