/** The shape of the kit's texts (messages.ts): every text of its pages in one language, and what a locale may give. */
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
 * `step_up_intent_unusable` still open there), one another tab sent at the same moment (kept anew
 * or run there) and the fallbacks for unlisted codes.
 */
export type ErrorTextKey =
  | KitErrorCode
  | 'method_not_allowed'
  | 'stored_number_refused'
  | 'kept_number_refused'
  | 'step_up_intent_other_resource'
  | 'step_up_intent_sent_elsewhere'
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
    /** The same page opened before any verification for that form: it claims none. */
    confirmPrompt: (label: string) => string;
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
