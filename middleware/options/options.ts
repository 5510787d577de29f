/**
 * The factory's options, grouped in the style of express-openid-connect, and their resolved form.
 * The resolved type is derived from the options type; `resolveKitOptions` checks every option
 * without side effects (it builds no limiter and opens no database), reports every problem at once
 * (one KitError `invalid_options`, each message naming the fix) and never echoes the client secret.
 */
import type { Request } from 'express';
import type { VerifyClientRetry, VerifyClientTimeouts } from '../client/client-options.ts';
import type { HookTimeouts } from '../deadline.ts';
import type { KitLogger } from '../logger.ts';
import type { KitMessagesInput, LocaleChooser, MessageCatalog } from '../pages/messages.ts';
import type { PageRenderers } from '../pages/pages.ts';
import type { StartLimits, StartLimitsOptions } from '../limits/start-limits.ts';
import type { PumpingOptions, ResolvedPumping } from '../pumping/pumping-options.ts';
import type { DestinationPolicy, DestinationPolicyOptions } from '../numbers/destination-policy.ts';
import type { VerifyStore } from '../store/types.ts';
import type { ActionDefinition, OutcomeHook, Platform, ScopeDefinition, VerifyClient } from '../types.ts';

/** The signed-in user as the integrator knows them. */
export interface ResolvedUser {
  /**
   * Stable reference for this user (the same on every attempt: the hosted page's passkey
   * enrolment persists only when it is). Not an email or phone number that can change.
   */
  userRef: string;
  /** The phone destination the SMS goes to, taken from the server's own record of the user. */
  destination: string;
}

/** The hook for abuse limits: runs before a session is created (before any SMS). */
/** Picks the default country of a typed number for a request: an ISO 3166-1 alpha-2 code, or undefined for none. */
export type DefaultCountryChooser = (req: Request) => string | undefined | Promise<string | undefined>;

export type BeforeCreateHook = (
  req: Request,
  attempt: { userRef: string; destination: string; action: string },
) => void | Promise<void>;

/** The kit's routes: a path, or `false` to leave the route out. The landing answers at the returnUrl's path. */
export interface RoutesOptions {
  /** POST route that starts a verification. Default '/verify/start'. */
  start?: string | false;
  /** GET page shown instead of re-sending a used auto-submit form (web). Default '/verify/start-again'. */
  startAgain?: string | false;
  /** POST JSON route completing a mobile flow (platform 'mobile'). Default '/verify/mobile/complete'. */
  mobileComplete?: string | false;
  /** The landing at the returnUrl's path (platform 'web'). Default true on the web, false on mobile. */
  landing?: boolean;
  /**
   * GET page where a user confirms a guarded form kept while they verified
   * (requireRecentVerification). Default '/verify/step-up' on the web.
   */
  stepUp?: string | false;
}

/** Settings of the client the kit builds (ignored when you pass a ready VerifyClient). */
export interface ClientSettings {
  timeouts?: VerifyClientTimeouts;
  retry?: VerifyClientRetry;
  /** Most connections open to the service at once (VerifyClientOptions.connections). Default: no limit. */
  connections?: number;
}

/** The start route's CSRF defence (the synchronizer token, fetch metadata and Origin checks). */
export interface CsrfOptions {
  /**
   * REPLACES the kit's synchronizer-token check, for apps with their own CSRF defence. The kit's
   * Sec-Fetch-Site / Origin checks still run. Return true to accept the request.
   */
  dangerouslyReplaceTokenCheck?: (req: Request) => boolean | Promise<boolean>;
  /** Origins allowed in an `Origin` header besides the returnUrl's (web) origin. */
  allowedOrigins?: string[];
  /** Session key of the token. Default 'verifyKitCsrf'. */
  sessionKey?: string;
}

/** How long a landing that finds the session still pending waits, and how its page keeps checking. */
export interface LandingOptions {
  /**
   * Status re-reads on a pending landing before the "still confirming" page. Default 3. The page's
   * own background checks read once each (the page is already the loop that checks again).
   */
  pendingRechecks?: number;
  /** Pause between those re-reads. Default 600 ms. */
  pendingRecheckIntervalMs?: number;
  /**
   * The "still confirming" page's script first checks again in the background after this many
   * seconds, then each wait half as long again, up to ten times this. Default 3.
   */
  refreshSeconds?: number;
  /** It stops checking this long after the attempt was created; the sweep finishes it. Default 5 min. */
  refreshWindowMs?: number;
  /**
   * Reads of one session's status coalesce in this instance: one in flight at a time, and a
   * `pending` answer is reused this long, so a flood of landings costs a few reads a second. It must
   * be below pendingRecheckIntervalMs when there are re-checks (a landing's re-check then always
   * reads; the kit refuses it otherwise). Default 500 ms; 0
   * reuses nothing (reads in flight are still shared).
   */
  pendingReuseMs?: number;
}

/** How new attempts are scheduled for the sweep (the sweep's own run options are given to runSweep). */
export interface KitSweepOptions {
  /** Delay before the sweep first reads an attempt nobody landed. Default 3 min. */
  firstCheckAfterMs?: number;
  /**
   * Default `maxReadsPerSecond` of kit.runSweep and kit.startSweepWorker (and so of the sweep
   * job): status reads a second all sweep processes sharing the store make together. Default: no
   * cap (the sweep still slows down whenever the service answers 429).
   */
  maxReadsPerSecond?: number;
}

/** The options of createVerificationKit; every one is checked when it is called. */
export interface VerificationKitOptions<Tx = unknown> {
  /** The service's base address, e.g. https://verify.example.com. */
  baseUrl: string;
  clientId: string;
  /** Issued by the portal. Stays on the server; only ever sent in the Authorization header. */
  clientSecret: string;
  /** The ONE registered return URL, byte for byte. The landing answers at its path. */
  returnUrl: string;
  /** 'web' (default) or 'mobile' (returnUrl is a custom-scheme deep link). */
  platform?: Platform;
  store: VerifyStore<Tx>;
  actions: readonly ActionDefinition<Tx>[];
  /**
   * Step-up scopes for your own routes (kit.requireRecentVerification): each verified attempt of a
   * scope writes a grant through the same fulfil path as an action. Web only; needs the kit's store.
   */
  scopes?: readonly ScopeDefinition[];
  /** The signed-in user's stable userRef and destination; null when nobody is signed in. */
  resolveUser: (req: Request) => ResolvedUser | null | undefined | Promise<ResolvedUser | null | undefined>;
  /** A ready client (tests, DI), or settings for the one the kit builds from baseUrl/clientId/clientSecret. */
  client?: VerifyClient | ClientSettings;
  /** Paths of the kit's routes, or `false` to leave one out (e.g. to mount only the landing). */
  routes?: RoutesOptions;
  csrf?: CsrfOptions;
  /**
   * Limits on starts per user, destination and client IP, against SMS pumping. Default on:
   * counted by the kit's store, all three in one transaction (with PostgreSQL, shared by every
   * instance). Pass budgets to change them, or createStartLimits({ store }) on another counter.
   */
  limits?: StartLimitsOptions | StartLimits;
  /**
   * Turns the start limits off. Only for apps that enforce equal limits elsewhere:
   * every start sends an SMS at your cost.
   */
  dangerouslyDisableStartLimits?: boolean;
  /**
   * Rules against SMS pumping: texts never verified, counted per phone country, number block
   * (1,000 adjacent numbers), client address and user in the kit's store, against thresholds that
   * learn from your verified traffic. Default `{ mode: 'record' }`: tripped rules are recorded and
   * logged, nothing is refused; `mode: 'refuse'` refuses (or offers `challenge`).
   */
  pumping?: PumpingOptions;
  /** Runs before each session create; throw KitError('rate_limited') to refuse (no session, no SMS). */
  beforeCreate?: BeforeCreateHook;
  /**
   * The country a typed number without its "+" prefix belongs to (an ISO 3166-1 alpha-2 code such
   * as 'GB', or a function of the request, e.g. from the user's profile or language, returning one
   * or undefined), so people can type "07700 900123" as they write it. Only actions with
   * `destination: 'entered'` read it; a function runs under `hookTimeouts.defaultCountry`.
   */
  defaultCountry?: string | DefaultCountryChooser;
  /**
   * Which numbers are texted at all, checked before any service call for every action, the user's
   * stored number included: allowed and refused countries, refused number types (by default
   * premium-rate, shared-cost, personal (forwarding), toll-free, UAN, voicemail and pager numbers).
   */
  destinationPolicy?: DestinationPolicyOptions;
  /** Clock in ms. Default Date.now. */
  now?: () => number;
  /**
   * pino-compatible. Default: one readable line per start, landing, outcome and sweep run on
   * stderr in development, nothing when NODE_ENV is `production` or `test`; the environment
   * variable `VERIFY_KIT_LOG=console` prints anywhere, `VERIFY_KIT_LOG=off` never. No line ever
   * carries the client secret or a handoff.
   */
  logger?: KitLogger;
  pages?: Partial<PageRenderers>;
  /**
   * Texts of the kit's pages per locale tag, each merged over the English defaults:
   * `{ en: { startNew: 'Try again' }, fr: frenchMessages }`. Default: English only.
   */
  messages?: Readonly<Record<string, KitMessagesInput>>;
  /** Picks the locale tag for a request (e.g. from the user's profile). Default: the best `Accept-Language` match. */
  locale?: LocaleChooser;
  landing?: LandingOptions;
  sweep?: KitSweepOptions;
  /**
   * After-commit hook for side effects that cannot run inside the transaction (email, analytics):
   * called for fulfilled, failed, expired and superseded attempts, at least once, after the
   * response. The kit's sweep (kit.runSweep, kit.startSweepWorker) re-delivers what failed.
   */
  onOutcome?: OutcomeHook;
  /**
   * Deadlines in ms for your callbacks the kit awaits; each one late counts as failed (a request
   * gets the error page, an onOutcome delivery or a fulfilment is retried later). Every name and
   * its default: DEFAULT_HOOK_TIMEOUTS (resolveUser, defaultCountry, prepare, beforeCreate, limits,
   * challenge, csrfCheck, bindTo and onUnenrolled 5000; client 30000; onOutcome, fulfil and store
   * 10000). fulfil counts only where it is async (PostgreSQL; SQLite's runs inside its transaction);
   * store bounds each store call of a user's request (late: 503 `store_unavailable`; a fulfilment's
   * transaction gets store plus fulfil). Synchronous `locale` and `pages` cannot be pre-empted:
   * when they throw, the kit uses English and its built-in pages.
   */
  hookTimeouts?: Partial<HookTimeouts>;
  /**
   * 'render' (default): the kit answers errors itself (an HTML page, or JSON on JSON routes) with
   * the KitError's status. 'next': KitErrors go to Express's error handler (`err.code`, `err.status`).
   */
  errors?: 'render' | 'next';
}

/** Options that get a default when left out. */
type Defaulted = 'platform' | 'now' | 'logger' | 'errors';
/** Options whose resolved form has another shape. */
type Reshaped =
  | 'actions'
  | 'scopes'
  | 'routes'
  | 'csrf'
  | 'landing'
  | 'sweep'
  | 'pages'
  | 'messages'
  | 'locale'
  | 'client'
  | 'hookTimeouts'
  | 'destinationPolicy'
  | 'pumping';

/** Each route's path, or false when it is not mounted (the landing's path is the returnUrl's). */
export type ResolvedRoutes = { readonly [Route in keyof RoutesOptions]-?: string | false };

/** The options after `resolveKitOptions`: defaults filled in, groups complete, actions by name. */
export type ResolvedKitOptions<Tx = unknown> = Omit<VerificationKitOptions<Tx>, Defaulted | Reshaped> &
  Required<Pick<VerificationKitOptions<Tx>, Defaulted>> & {
    actions: ReadonlyMap<string, ActionDefinition<Tx>>;
    /** The step-up scopes by name (each also in `actions`, as the action that writes its grant). */
    scopes: ReadonlyMap<string, ScopeDefinition>;
    routes: ResolvedRoutes;
    /** The returnUrl's origin (web) or null (mobile deep link). */
    returnOrigin: string | null;
    csrf: Required<Omit<CsrfOptions, 'dangerouslyReplaceTokenCheck'>> &
      Pick<CsrfOptions, 'dangerouslyReplaceTokenCheck'>;
    landing: Required<LandingOptions>;
    sweep: Required<Pick<KitSweepOptions, 'firstCheckAfterMs'>> & { maxReadsPerSecond: number | undefined };
    pages: PageRenderers;
    messages: MessageCatalog;
    /** A ready client, or the settings of the one the kit builds. */
    client: VerifyClient | ClientSettings;
    hookTimeouts: HookTimeouts;
    destinationPolicy: DestinationPolicy;
    pumping: ResolvedPumping;
  };
