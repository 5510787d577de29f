/**
 * What `auditIntegration` needs from the integrator: only what it cannot guess. Every option is
 * checked when the audit is called; one error lists every problem and how to fix the call.
 */
import { MIN_SECRET_LENGTH } from '../../middleware/secret-spellings.ts';
import type { AuditAgent } from './agent.ts';
import { unknownAuditNames } from './option-names.ts';
import { illTypedOptions } from './option-shapes.ts';
import { scrubSecret, secretForms } from './secret.ts';

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
  /** At least one; the stale-intent and sweep checks use the first (it should keep the default ordering 'latest'). */
  actions: AuditAction[];
  /** Counts an attempt's real effect. Without it the audit counts the kit's fulfilment mark through `kit.attempts`. */
  probe?: EffectProbe;
  /**
   * Your app's kit. Before it starts anything, the audit compares where the kit calls the service
   * (`kit.serviceUrl`) with `emulatorUrl`; without a probe it counts effects through `kit.attempts`.
   */
  kit?: {
    serviceUrl?: string | undefined;
    attempts?: { get(sessionId: string): Promise<{ fulfilledAt: number | null } | undefined> };
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
  /** Concurrent landings of the reload storm; default 12. */
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

function isUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function positive(problems: string[], name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max) {
    problems.push(`\`${name}\` must be a whole number from 1 to ${max}.`);
    return fallback;
  }
  return value as number;
}

function checkSignIn(problems: string[], signIn: unknown): void {
  if (typeof signIn === 'function') return;
  const form = signIn as Partial<SignInForm> | undefined;
  if (typeof form !== 'object' || form === null || typeof form.path !== 'string' || typeof form.fields !== 'function') {
    problems.push(
      '`signIn` must be a function (agent, user) => ({ csrf }) or a form { path, fields: (user) => ({...}) }.',
    );
  }
}

function checkActions(problems: string[], actions: unknown): void {
  if (!Array.isArray(actions) || actions.length === 0) {
    problems.push("`actions` must list at least one action, e.g. [{ name: 'confirm_phone' }].");
    return;
  }
  for (const [i, action] of actions.entries()) {
    if (typeof action?.name !== 'string' || action.name === '') problems.push(`\`actions[${i}].name\` must be a name.`);
    const entered = (action as Partial<AuditAction> | undefined)?.enteredNumber;
    if (entered !== undefined && typeof entered?.numberOf !== 'function') {
      problems.push(
        `\`actions[${i}].enteredNumber\` must be { numberOf: (user) => the number your app holds for that user }, e.g. a SELECT on your users table.`,
      );
    }
    const stepUp = (action as Partial<AuditAction> | undefined)?.requireRecentVerification;
    if (
      stepUp !== undefined &&
      (typeof stepUp?.scope !== 'string' ||
        stepUp.scope === '' ||
        !Number.isInteger(stepUp.maxAge) ||
        stepUp.maxAge < 1 ||
        stepUp.maxAge > 86_400)
    ) {
      problems.push(
        `\`actions[${i}].requireRecentVerification\` must be the action's { scope, maxAge } as your kit has it (maxAge in seconds, a whole number from 1 to 86400).`,
      );
    }
  }
}

function checkGuardedRoute(problems: string[], route: Partial<AuditGuardedRoute> | undefined, i: number): void {
  const at = `\`stepUp[${i}]`;
  if (typeof route !== 'object' || route === null) {
    problems.push(`${at}\` must be a route { path, method?, scope, maxAge, fields?, resource?, effects? }.`);
    return;
  }
  const { path, method = 'GET', scope, maxAge, fields, resource, effects } = route;
  if (typeof path !== 'function' && (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//'))) {
    problems.push(
      `${at}.path\` must be a path on your app starting with one "/" (e.g. '/security'), or a function of n.`,
    );
  }
  if (method !== 'GET' && method !== 'POST') problems.push(`${at}.method\` must be 'GET' (a page) or 'POST' (a form).`);
  if (typeof scope !== 'string' || scope === '') problems.push(`${at}.scope\` must be the guard's scope.`);
  if (!Number.isInteger(maxAge) || (maxAge as number) < 1 || (maxAge as number) > 86_400) {
    problems.push(`${at}.maxAge\` must be the guard's maxAge in seconds (a whole number from 1 to 86400).`);
  }
  if (fields !== undefined && method !== 'POST') problems.push(`${at}.fields\` are sent only with method 'POST'.`);
  if (fields !== undefined && typeof fields !== 'function' && (typeof fields !== 'object' || fields === null)) {
    problems.push(`${at}.fields\` must be the form's fields, or a function (n, agent) returning them.`);
  }
  if (resource !== undefined && typeof resource !== 'boolean') problems.push(`${at}.resource\` must be true or false.`);
  if (resource === true && typeof path !== 'function' && typeof fields !== 'function') {
    problems.push(`${at}.resource\` is true: make \`path\` or \`fields\` a function of n that names resource n.`);
  }
  if (method === 'POST' && typeof effects !== 'function') {
    problems.push(
      `${at}.effects\` must count your handler's work for one user of the audit, e.g. (user) => SELECT count(*) ... (required for a POST route).`,
    );
  }
}

function checkStepUp(problems: string[], options: AuditOptions): void {
  const { stepUp, clock } = options;
  if (clock !== undefined && typeof clock?.advance !== 'function') {
    problems.push('`clock` must be the clock your kit and the emulator share (createTestClock()).');
  }
  if (stepUp === undefined) return;
  if (!Array.isArray(stepUp) || stepUp.length === 0) {
    problems.push(
      "`stepUp` must list your guarded routes, e.g. [{ path: '/security', scope: 'security', maxAge: 600 }].",
    );
    return;
  }
  for (const [i, route] of stepUp.entries()) checkGuardedRoute(problems, route, i);
}

/** Removes the client secret given from a text of the options' own (a name the audit does not know). */
function secretHider(options: AuditOptions): (text: string) => string {
  const { clientId, clientSecret } = options;
  if (typeof clientSecret !== 'string' || clientSecret === '') return (text) => text;
  const forms = secretForms(typeof clientId === 'string' ? clientId : '', clientSecret);
  return (text) => scrubSecret(forms, text);
}

/** Checks the options; throws one error listing every problem. */
export function resolveAuditOptions(options: AuditOptions): ResolvedAuditOptions {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) throw new TypeError('auditIntegration: pass an options object.');
  if (!isUrl(options.appUrl))
    problems.push('`appUrl` must be your app\'s http(s) address, e.g. "http://localhost:3000".');
  if (!isUrl(options.emulatorUrl))
    problems.push("`emulatorUrl` must be the emulator's address (`startEmulator().url`).");
  if (options.serviceUrl !== undefined && !isUrl(options.serviceUrl))
    problems.push("`serviceUrl` must be the http(s) address your app's kit calls (its `baseUrl`).");
  for (const name of ['clientId', 'clientSecret'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '')
      problems.push(`\`${name}\` must be your app's ${name}.`);
  }
  if (
    typeof options.clientSecret === 'string' &&
    options.clientSecret !== '' &&
    options.clientSecret.length < MIN_SECRET_LENGTH
  ) {
    problems.push(
      `\`clientSecret\` is shorter than ${MIN_SECRET_LENGTH} characters, which the kit refuses: pass the clientSecret your app's kit was given.`,
    );
  }
  checkSignIn(problems, options.signIn);
  checkActions(problems, options.actions);
  if (options.probe !== undefined && typeof options.probe !== 'function') problems.push('`probe` must be a function.');
  if (options.probe === undefined && typeof options.kit?.attempts?.get !== 'function') {
    problems.push(
      "Pass `probe` (counts an attempt's real effect) or `kit` (the kit, for its read API `kit.attempts`).",
    );
  }
  if (
    options.sweep !== undefined &&
    (typeof options.sweep.run !== 'function' || typeof options.sweep.clock?.advance !== 'function')
  ) {
    problems.push(
      '`sweep` must be { run: () => kit.runSweep(), clock } with the clock your kit was given (createTestClock()).',
    );
  } else if (options.sweep !== undefined) {
    positive(problems, 'sweep.advanceSeconds', options.sweep.advanceSeconds, 1800, 30 * 86_400);
  }
  checkStepUp(problems, options);
  problems.push(...unknownAuditNames(options, secretHider(options)));
  problems.push(...illTypedOptions(options as unknown as Record<string, unknown>));
  const resolved: ResolvedAuditOptions = {
    ...options,
    appOrigin: isUrl(options.appUrl) ? new URL(options.appUrl).origin : '',
    stormSize: positive(problems, 'stormSize', options.stormSize, 12, 100),
    burstSize: positive(problems, 'burstSize', options.burstSize, 12, 200),
    ipBurstSize: positive(problems, 'ipBurstSize', options.ipBurstSize, 32, 1000),
    concurrency: positive(problems, 'concurrency', options.concurrency, 4, 32),
    timeoutMs: positive(problems, 'timeoutMs', options.timeoutMs, 20_000, 600_000),
  };
  if (problems.length > 0) {
    throw new TypeError(
      `auditIntegration: ${problems.length} problem(s) with the options:\n- ${problems.join('\n- ')}`,
    );
  }
  return resolved;
}
