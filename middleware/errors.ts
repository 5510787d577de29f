/**
 * Every error the kit raises is a KitError with a stable string `code` (switch on it, never on
 * the message) and the HTTP status the kit's routes answer with. Messages never carry the client
 * secret, an Authorization header or a handoff.
 */
import { MIN_OTHER_SECRET_LENGTH, MIN_SECRET_LENGTH, secretSpellings } from './secret-spellings.ts';
import { coverShown, replaceCovered } from './shown-text.ts';

export { environmentSecrets } from './secret-spellings.ts';

export const KitErrorCode = {
  /**
   * Options of the kit, the sweep, the worker or the job are wrong (or the app is set up wrongly,
   * e.g. no express-session); the message lists every problem and how to fix the call.
   */
  InvalidOptions: 'invalid_options',
  /** The landing router is mounted somewhere other than the registered returnUrl's path. */
  MountedAtWrongPath: 'mounted_at_wrong_path',
  NotSignedIn: 'not_signed_in',
  CsrfFailed: 'csrf_failed',
  UnknownAction: 'unknown_action',
  InvalidActionParams: 'invalid_action_params',
  /** The typed number cannot be a real phone number (or none was sent): nothing was sent or stored. */
  InvalidPhoneNumber: 'invalid_phone_number',
  /**
   * The destination policy refuses the number (its country or type): nothing was sent or stored.
   * Users are not told which rule; the log line and the `verify_kit.destinations.refused` counter are.
   */
  PhoneNumberRefused: 'phone_number_refused',
  RateLimited: 'rate_limited',
  /** session_id / state missing, duplicated, oversized or malformed. */
  InvalidReturnParams: 'invalid_return_params',
  /** No attempt is stored for this state (forged, or already swept away). */
  UnknownAttempt: 'unknown_attempt',
  /** The session_id does not belong to the attempt stored for this state. */
  SessionMismatch: 'session_mismatch',
  /** The service echoed a state or userRef other than the one stored for the attempt. */
  ServiceResponseMismatch: 'service_response_mismatch',
  /** Network error, timeout or 5xx from the service, after the retries the call allows. */
  ServiceUnavailable: 'service_unavailable',
  /**
   * The service answered 429 (it limits this client's calls): `retryAfterSeconds` says when to
   * call again. A start that stays refused after its retries shows "busy, try again shortly" and
   * spends none of the user's start budgets; a landing shows the pending page instead.
   */
  ServiceBusy: 'service_busy',
  /** The service refused the request with an errorCode (see `serviceErrorCode`). */
  ServiceRejected: 'service_rejected',
  /** The service answered something the spec does not allow (redirect, wrong content type, bad JSON). */
  ServiceProtocolError: 'service_protocol_error',
  /** The action's own fulfil threw; the transaction was rolled back and nothing was marked. */
  FulfilFailed: 'fulfil_failed',
  /**
   * One of your callbacks (resolveUser, prepare, beforeCreate, the CSRF check, onOutcome, fulfil)
   * did not settle within its deadline (`hookTimeouts`), or answered what the kit cannot use; one
   * that throws passes its own error on. Nothing it would have decided was written, and the sweep
   * retries what it must.
   */
  HookFailed: 'hook_failed',
  /**
   * A guarded request kept while its user verified (requireRecentVerification) was already run,
   * expired, or belongs to another user, browser session or route: nothing ran.
   */
  StepUpIntentUnusable: 'step_up_intent_unusable',
  /** A guarded form was sent as a file upload: kept requests hold form fields only. */
  StepUpUploadRefused: 'step_up_upload_refused',
  /**
   * The kit's store did not answer a call of a request (the start's, the landing's, the mobile
   * completion's) within `hookTimeouts.store`: the request is answered without it. A late write
   * may still apply (the landing's reload, or the sweep, then reads what it did).
   */
  StoreUnavailable: 'store_unavailable',
} as const;

export type KitErrorCode = (typeof KitErrorCode)[keyof typeof KitErrorCode];

const statusByCode: Record<KitErrorCode, number> = {
  invalid_options: 500,
  mounted_at_wrong_path: 500,
  not_signed_in: 401,
  csrf_failed: 403,
  unknown_action: 400,
  invalid_action_params: 400,
  invalid_phone_number: 422,
  phone_number_refused: 422,
  rate_limited: 429,
  invalid_return_params: 400,
  unknown_attempt: 400,
  session_mismatch: 400,
  service_response_mismatch: 502,
  service_unavailable: 503,
  service_busy: 503,
  service_rejected: 502,
  service_protocol_error: 502,
  fulfil_failed: 500,
  hook_failed: 500,
  step_up_intent_unusable: 409,
  step_up_upload_refused: 415,
  store_unavailable: 503,
};

/** Details a KitError may carry besides its code and message. */
export interface KitErrorOptions {
  /** The service's own `errorCode`, for ServiceRejected. */
  serviceErrorCode?: string;
  /** The service's HTTP status, when there was a response. */
  serviceStatus?: number;
  /** Seconds the client should wait, for RateLimited and ServiceBusy. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/** Every client secret this process's kits and clients were given, in each form a message could carry it. */
const secretForms = new Set<string>();
/** The same forms, longest first (a whole form goes before its part), kept as they are remembered. */
let longestFirst: readonly string[] = [];
/** A run of a remembered form this long or longer is recognised wherever a cut left it. */
const MIN_FRAGMENT = 8;
/** Every MIN_FRAGMENT characters of every remembered form. */
const secretFragments = new Set<string>();

export { MIN_SECRET_LENGTH };

/**
 * Remembers a client secret (when the kit or a client is created, before any check can quote
 * it), so that no message ever carries it: `redactSecrets` removes it in every spelling
 * `secretSpellings` lists, and with `clientId` its Basic credentials whole.
 */
export function rememberSecret(secret: unknown, clientId?: unknown): void {
  if (typeof secret !== 'string') return;
  for (const spelling of asGivenAndTrimmed(secret)) {
    if (spelling.length < MIN_SECRET_LENGTH) continue;
    for (const form of formsOf(spelling, typeof clientId === 'string' ? clientId : undefined)) {
      secretForms.add(form);
      for (let at = 0; at + MIN_FRAGMENT <= form.length; at++) secretFragments.add(form.slice(at, at + MIN_FRAGMENT));
    }
  }
  longestFirst = byLengthDown([...secretForms]);
}

/**
 * Forgets every remembered secret. For a test runner alone, which runs many files' kits in one
 * process, each with secrets of its own: a word of one file's secret would be redacted from the
 * next file's messages. A production process never forgets one; the package does not export it.
 */
export function forgetRememberedSecrets(): void {
  secretForms.clear();
  secretFragments.clear();
  longestFirst = [];
}

/**
 * A secret as given and trimmed: one read from a file keeps its newline (the kit refuses it), while
 * the rest of the configuration (a URL built from it, a message) holds it without.
 */
function asGivenAndTrimmed(secret: string): string[] {
  return [...new Set([secret, secret.trim()])];
}

/**
 * Text from outside (the service's error code, which a proxy in front of it may fill with the
 * start of the Authorization header it refused) redacted, and any run of MIN_FRAGMENT characters
 * or more of a remembered form too: a value cut short keeps a part no whole form matches. The same
 * for each of `alsoSecrets` (e.g. `environmentSecrets`: a command's configuration may quote the start
 * of one it read).
 */
export function redactSecretFragments(text: string, alsoSecrets: readonly string[] = []): string {
  const { forms, fragments } = redactedWith(alsoSecrets);
  const out = replaceForms(text, forms);
  if (fragments.size === 0 || out.length < MIN_FRAGMENT) return out;
  let covered: Uint8Array | undefined;
  for (let at = 0; at + MIN_FRAGMENT <= out.length; at++) {
    if (!fragments.has(out.slice(at, at + MIN_FRAGMENT))) continue;
    covered ??= new Uint8Array(out.length);
    covered.fill(1, at, at + MIN_FRAGMENT);
  }
  // As it shows too: `%73%6B…` and `&#x73;&#x6b;…` spell what they encode (a URL, a page quoted).
  covered = coverShown(out, forms, { size: MIN_FRAGMENT, pieces: fragments }, covered);
  return covered === undefined ? out : replaceCovered(out, covered, '[redacted]');
}

/** What redaction removes with a list of other secrets: their forms and fragments with the remembered ones. */
interface Redacted {
  forms: readonly string[];
  fragments: ReadonlySet<string>;
  /** The remembered forms these were worked out with: a secret remembered since makes them stale. */
  rememberedWith: readonly string[];
}

const redactedByList = new WeakMap<readonly string[], Redacted>();

/**
 * The forms and fragments to remove with `alsoSecrets`, worked out once per list: a logger passes
 * the same list of the environment's secrets with every line it writes, and spelling each secret
 * every way (hundreds of fragments) per line would cost more than the line.
 */
function redactedWith(alsoSecrets: readonly string[]): Redacted {
  if (alsoSecrets.length === 0)
    return { forms: longestFirst, fragments: secretFragments, rememberedWith: longestFirst };
  const known = redactedByList.get(alsoSecrets);
  if (known !== undefined && known.rememberedWith === longestFirst) return known;
  const redacted = {
    forms: formsToRedact(alsoSecrets),
    fragments: withFragmentsOf(alsoSecrets),
    rememberedWith: longestFirst,
  };
  redactedByList.set(alsoSecrets, redacted);
  return redacted;
}

/** The remembered fragments and every MIN_FRAGMENT characters of each form of `secrets` (long enough to be one). */
function withFragmentsOf(secrets: readonly string[]): Set<string> {
  const fragments = new Set(secretFragments);
  for (const secret of secrets) {
    if (secret.length < MIN_OTHER_SECRET_LENGTH) continue;
    for (const form of formsOf(secret))
      for (let at = 0; at + MIN_FRAGMENT <= form.length; at++) fragments.add(form.slice(at, at + MIN_FRAGMENT));
  }
  return fragments;
}

function byLengthDown(forms: string[]): string[] {
  return forms.sort((a, b) => b.length - a.length);
}

/** The texts of the secret's spellings, longest first so a whole form goes before its part. */
function formsOf(secret: string, clientId?: string): string[] {
  return byLengthDown(secretSpellings(secret, clientId).map((spelling) => spelling.text));
}

/** True when `text` carries `secret` in any of its forms, as written or as it shows (a baseUrl must not). */
export function carriesSecret(text: string, secret: unknown): boolean {
  // A secret too short to accept is still looked for: the message refusing it must not quote it either.
  if (typeof secret !== 'string') return false;
  return asGivenAndTrimmed(secret).some((spelling) => {
    if (spelling.length < MIN_OTHER_SECRET_LENGTH) return false;
    const forms = formsOf(spelling);
    return forms.some((form) => text.includes(form)) || coverShown(text, forms) !== undefined;
  });
}

/**
 * `text` with every remembered secret, and each of `alsoSecrets` (e.g. `environmentSecrets`), in
 * every form, replaced by [redacted]: as written, and where what it shows spells one.
 */
export function redactSecrets(text: string, alsoSecrets: readonly string[] = []): string {
  const { forms } = redactedWith(alsoSecrets);
  const out = replaceForms(text, forms);
  const covered = coverShown(out, forms);
  return covered === undefined ? out : replaceCovered(out, covered, '[redacted]');
}

/** The remembered forms with those of `alsoSecrets`, longest first. */
function formsToRedact(alsoSecrets: readonly string[]): readonly string[] {
  // Every KitError and logged error passes here: the remembered forms are sorted once, not per call.
  const also = alsoSecrets
    .filter((secret) => secret.length >= MIN_OTHER_SECRET_LENGTH)
    .flatMap((secret) => formsOf(secret));
  return also.length === 0 ? longestFirst : byLengthDown([...secretForms, ...also]);
}

function replaceForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join('[redacted]');
  return out;
}

/** The one error type of the kit: a stable `code`, the HTTP `status`, and a message that never carries a secret. */
export class KitError extends Error {
  override readonly name = 'KitError';
  readonly code: KitErrorCode;
  /** HTTP status for Express's error handler. */
  readonly status: number;
  readonly serviceErrorCode: string | undefined;
  readonly serviceStatus: number | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: KitErrorCode, message: string, options: KitErrorOptions = {}) {
    // Every message the kit raises passes here: the client secret never leaves in one, nor a part
    // of it (an app's KitError quoting a key cut short).
    super(redactSecretFragments(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = statusByCode[code];
    // The service's own text, logged beside the message: a proxy in front of it may quote the request.
    this.serviceErrorCode =
      options.serviceErrorCode === undefined ? undefined : redactSecretFragments(options.serviceErrorCode);
    this.serviceStatus = options.serviceStatus;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * Errors a callback's deadline rejected with (deadline.ts). Told apart by this mark, never by their
 * code: the integrator's code may throw a KitError `hook_failed` of its own, and that is a failure,
 * not a callback still running.
 */
const missedDeadlines = new WeakSet<object>();

/** Marks the error a deadline rejected with; returns it. */
export function missedDeadline<E extends Error>(error: E): E {
  missedDeadlines.add(error);
  return error;
}

/** True for an error a callback's deadline rejected with: the callback may still be running. */
export function isMissedDeadline(value: unknown): value is Error {
  return typeof value === 'object' && value !== null && missedDeadlines.has(value);
}

/** True for a KitError (of `code`, when given). */
export function isKitError(value: unknown, code?: KitErrorCode): value is KitError {
  // Never throws: the integrator's code may throw anything, even a revoked Proxy that `instanceof` throws on.
  try {
    return value instanceof KitError && (code === undefined || value.code === code);
  } catch {
    return false;
  }
}
