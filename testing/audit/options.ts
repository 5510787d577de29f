/**
 * What `auditIntegration` needs from the integrator: only what it cannot guess. Every option is
 * checked when the audit is called; one error lists every problem and how to fix the call.
 */
import type { TestClock } from '../../emulator/clock.ts';
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
  fields: (user: string) => Record<string, string>;
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
  /** Your kit (or anything with its read API): needed when there is no probe. */
  kit?: { attempts: { get(sessionId: string): Promise<{ fulfilledAt: number | null } | undefined> } };
  /**
   * How your sweep runs, on the clock your kit was given (`now: clock.now` of `createTestClock()`,
   * the clock you also give the emulator): the audit moves the clock by `advanceSeconds` (default
   * 1800, half an hour) and calls `run`.
   */
  sweep?: { run(): Promise<unknown>; clock: Pick<TestClock, 'advance'>; advanceSeconds?: number };
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
  /** Each request's bound; default 20 000 ms. */
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
  }
}

/** Checks the options; throws one error listing every problem. */
export function resolveAuditOptions(options: AuditOptions): ResolvedAuditOptions {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) throw new TypeError('auditIntegration: pass an options object.');
  if (!isUrl(options.appUrl))
    problems.push('`appUrl` must be your app\'s http(s) address, e.g. "http://localhost:3000".');
  if (!isUrl(options.emulatorUrl))
    problems.push("`emulatorUrl` must be the emulator's address (`startEmulator().url`).");
  for (const name of ['clientId', 'clientSecret'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '')
      problems.push(`\`${name}\` must be your app's ${name}.`);
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
