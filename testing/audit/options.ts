/**
 * What `auditIntegration` needs from the integrator: only what it cannot guess. Every option is
 * checked when the audit is called; one error lists every problem and how to fix the call.
 */
import { MIN_SECRET_LENGTH } from '../../middleware/secret-spellings.ts';
import { unknownAuditNames } from './option-names.ts';
import { illTypedOptions } from './option-shapes.ts';
import type { AuditAction, AuditGuardedRoute, AuditOptions, ResolvedAuditOptions, SignInForm } from './option-types.ts';
import { scrubSecret, secretForms } from './secret.ts';

export type {
  AuditAction,
  AuditGuardedRoute,
  AuditOptions,
  EffectProbe,
  ResolvedAuditOptions,
  SignInForm,
  SignInFunction,
} from './option-types.ts';

function isUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function positive(problems: string[], name: string, value: unknown, fallback: number, max: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    problems.push(`\`${name}\` must be a whole number from ${min} to ${max}.`);
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
    const ordering = (action as Partial<AuditAction> | undefined)?.ordering;
    if (ordering !== undefined && ordering !== 'latest' && ordering !== 'independent') {
      problems.push(`\`actions[${i}].ordering\` must be 'latest' or 'independent', as your kit has it.`);
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
export function secretHider(options: AuditOptions): (text: string) => string {
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
  // `sweep: null` (a sweep left out by a ternary) is said as any other shape, never as a TypeError of its own.
  if (
    options.sweep !== undefined &&
    (typeof options.sweep?.run !== 'function' || typeof options.sweep.clock?.advance !== 'function')
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
    // One landing is no storm: nothing would land at once.
    stormSize: positive(problems, 'stormSize', options.stormSize, 12, 100, 2),
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
