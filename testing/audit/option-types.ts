/**
 * The shapes of what `auditIntegration` needs from the integrator: the options, the actions and
 * guarded routes it audits, and the options as resolved (defaults filled in).
 */
import type { AuditAgent } from './agent.ts';

/** Signs `user` in on `agent` (creating the test user if your app needs that) and returns the kit's start token. */
export type SignInFunction = (agent: AuditAgent, user: string) => Promise<{ csrf: string }>;

/**
 * A sign-in form: GET `path` (its hidden `tokenField`, if any, is sent back), POST `fields(user)`
 * to `action` (default `path`), then GET `csrfFrom` and read the kit's `_csrf` from the form
 * posting to the start path.
 */
export interface SignInForm {
  path: string;
  action?: string;
  /**
   * The form's fields for `user`; may be async, e.g. to create the user first:
   * `async (user) => { await pool.query('INSERT INTO users ...', [user]); return { username: user }; }`.
   */
  fields: (user: string) => Record<string, string> | Promise<Record<string, string>>;
  /** The sign-in form's own hidden token field; default `_csrf`. */
  tokenField?: string;
  /** A page showing the start form (the kit's token is its hidden `_csrf`); default `/`. */
  csrfFrom?: string;
}

/** How to start one guarded action. */
export interface AuditAction {
  /** The action's name, as given to createVerificationKit. */
  name: string;
  /** The kit's start path; default `/verify/start`. */
  path?: string;
  /** The form's other fields; a function gets a counter, for actions that refuse the same value twice. */
  fields?: Record<string, string> | ((n: number) => Record<string, string>);
  /**
   * For an action with `destination: 'entered'`: the audit types a number of its own into the
   * form's `phone` field, and `numberOf(user)` reads the number your app holds for that user of
   * the audit (the name your `signIn` received; null when none), e.g. a SELECT on your users table.
   * The `entered.*` checks need it.
   */
  enteredNumber?: { numberOf: (user: string) => string | null | undefined | Promise<string | null | undefined> };
  /**
   * The action's `requireRecentVerification`, as your kit was given it: before the other checks
   * start this action, the user confirms it's them through the real flow (the start's "Confirm
   * it's you" page, the texted code, the landing); and a start without a fresh grant of `scope` in
   * the same browser must send nothing.
   */
  requireRecentVerification?: { scope: string; maxAge: number };
  /**
   * The action's `ordering`, as your kit was given it (default 'latest'). stale-intent lands an older
   * verified attempt after a newer one of each 'latest' action; an 'independent' one applies both.
   */
  ordering?: 'latest' | 'independent';
}

/**
 * A route of yours behind kit.requireRecentVerification, as the step-up checks request it. Routes
 * bound to a resource (`bindTo`) name it by a number: `path` or `fields` as a function of n, so
 * the audit can ask for resource 1 and resource 2.
 */
export interface AuditGuardedRoute {
  /** The guarded path (with its query, if any), e.g. '/security'; a function of n names resource n. */
  path: string | ((n: number) => string);
  /** 'GET' (a page; the default) or 'POST' (a form whose handler is yours). */
  method?: 'GET' | 'POST';
  /** The guard's `scope`, as given to requireRecentVerification. */
  scope: string;
  /** The guard's `maxAge` in seconds, as given to requireRecentVerification. */
  maxAge: number;
  /**
   * A form's fields (POST only). A function gets n (the resource) and the signed-in browser, e.g.
   * to read your own CSRF token from a page: `async (n, agent) => ({ _csrf: ..., payee: `P${n}` })`.
   */
  fields?:
    | Record<string, string>
    | ((n: number, agent: AuditAgent) => Record<string, string> | Promise<Record<string, string>>);
  /** True when the guard binds to a resource (`bindTo`) that `path` or `fields` names by n. */
  resource?: boolean;
  /**
   * Counts how many times your handler did its work for one user of the audit (the name your
   * `signIn` received), e.g. a SELECT on your own table. Required for a POST route.
   */
  effects?: (user: string) => number | Promise<number>;
}

/** Counts the real effect of the action run for one attempt (for example a SELECT on your own table). */
export type EffectProbe = (sessionId: string) => number | Promise<number>;

export interface AuditOptions {
  /** Where your app listens, e.g. http://localhost:3000. */
  appUrl: string;
  /** The emulator your app's kit talks to (its control API must be on, and reachable over loopback). */
  emulatorUrl: string;
  /** The client your app uses: the secret is what the leak check searches for. */
  clientId: string;
  clientSecret: string;
  /** Names of users the audit signs in are its own (audit1, audit2, ...): each needs its own phone number. */
  signIn: SignInFunction | SignInForm;
  /** At least one. */
  actions: AuditAction[];
  /** Counts an attempt's real effect. Without it the audit counts the kit's fulfilment mark through `kit.attempts`. */
  probe?: EffectProbe;
  /**
   * Your app's kit. Before it starts anything, the audit compares where the kit calls the service
   * (`kit.serviceUrl`) with `emulatorUrl`; without a probe it counts effects through `kit.attempts`.
   */
  kit?: {
    serviceUrl?: string | undefined;
    /** An attempt it does not know: undefined, or null (as a read relayed as JSON says it). */
    attempts?: { get(sessionId: string): Promise<{ fulfilledAt: number | null } | undefined | null> };
  };
  /**
   * Where your app's kit calls the service (its `baseUrl`, e.g. process.env.VERIFY_BASE_URL), when the
   * app runs in another process or its kit was given a ready client: compared with `emulatorUrl`
   * before anything is started. Not needed with `kit`.
   */
  serviceUrl?: string;
  /**
   * How your sweep runs, on the clock your kit was given (`now: clock.now` of `createTestClock()`,
   * the clock you also give the emulator): the audit moves the clock by `advanceSeconds` (default
   * 1800, half an hour) and calls `run`.
   */
  sweep?: {
    run(): Promise<unknown>;
    clock: { advance(by: { seconds: number }): unknown };
    advanceSeconds?: number;
  };
  /**
   * Your routes behind kit.requireRecentVerification. Without them the step-up checks are
   * reported as not run.
   */
  stepUp?: AuditGuardedRoute[];
  /**
   * The clock your kit and the emulator share (`createTestClock()`): the expired-grant check moves
   * it past a guard's maxAge, and waits for it when `advance` returns a promise (the emulator
   * control's `advanceClock`, for an app in another process). Default: `sweep.clock`.
   */
  clock?: { advance(by: { seconds: number }): unknown };
  /** Your app's log lines so far (searched for the secret and the handoffs). */
  logs?: () => readonly string[] | Promise<readonly string[]>;
  /** The headers your proxy adds (e.g. { 'x-forwarded-proto': 'https' }): the cookie check signs in through them. */
  proxy?: { headers: Record<string, string> };
  /** Your session cookie's name; default every cookie your sign-in sets. */
  sessionCookie?: string;
  /** Concurrent landings of the reload storm (2 or more); default 12. */
  stormSize?: number;
  /** Starts in the burst of the start-limit check; default 12 (above the kit's default 10 per user). */
  burstSize?: number;
  /**
   * Starts in the forwarded-address check, from one client claiming a new address each time; default
   * 32 (above the kit's default 30 per IP an hour). Set it above your own per-IP budget.
   */
  ipBurstSize?: number;
  /** Checks run at once; default 4. */
  concurrency?: number;
  /** Run only these check ids. */
  only?: string[];
  /** Each request's bound, from sending it to its answer's last byte; default 20 000 ms. */
  timeoutMs?: number;
}

export interface ResolvedAuditOptions extends AuditOptions {
  appOrigin: string;
  stormSize: number;
  burstSize: number;
  ipBurstSize: number;
  concurrency: number;
  timeoutMs: number;
}
