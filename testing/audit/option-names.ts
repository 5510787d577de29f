/**
 * The names `auditIntegration` knows. A misspelt option (`stepup`, `timeout`, a route's `scopes`,
 * `proxy` without its `headers`) would be dropped without a word and its checks left not run or run
 * without it, a pass the app never earned: every name that is none of them is refused, with the
 * name it most likely meant.
 */
import { closestName } from '../../middleware/closest-name.ts';

export const AUDIT_OPTION_NAMES = [
  'appUrl',
  'emulatorUrl',
  'clientId',
  'clientSecret',
  'signIn',
  'actions',
  'probe',
  'kit',
  'serviceUrl',
  'sweep',
  'stepUp',
  'clock',
  'logs',
  'proxy',
  'sessionCookie',
  'stormSize',
  'burstSize',
  'ipBurstSize',
  'concurrency',
  'only',
  'timeoutMs',
] as const;

export const ACTION_OPTION_NAMES = [
  'name',
  'path',
  'fields',
  'enteredNumber',
  'requireRecentVerification',
  'ordering',
] as const;
export const ROUTE_OPTION_NAMES = ['path', 'method', 'scope', 'maxAge', 'fields', 'resource', 'effects'] as const;
export const SIGN_IN_FORM_NAMES = ['path', 'action', 'fields', 'tokenField', 'csrfFrom'] as const;
export const SWEEP_OPTION_NAMES = ['run', 'clock', 'advanceSeconds'] as const;
export const PROXY_OPTION_NAMES = ['headers'] as const;

/** A group of options as an object, or undefined (its own shape is checked beside its names). */
function group(value: unknown): object | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

/** Every name of `options` and of its groups (actions, routes, a sign-in form, sweep, proxy) the audit does not know. */
export function unknownAuditNames(options: object, hide: (text: string) => string): string[] {
  const given = options as Record<string, unknown>;
  const problems = unknownNames('', options, AUDIT_OPTION_NAMES, hide);
  const nested = (where: string, value: unknown, known: readonly string[]) => {
    const found = group(value);
    if (found !== undefined) problems.push(...unknownNames(where, found, known, hide));
  };
  if (typeof given.signIn !== 'function') nested('signIn.', given.signIn, SIGN_IN_FORM_NAMES);
  nested('sweep.', given.sweep, SWEEP_OPTION_NAMES);
  nested('proxy.', given.proxy, PROXY_OPTION_NAMES);
  for (const [name, known] of [
    ['actions', ACTION_OPTION_NAMES],
    ['stepUp', ROUTE_OPTION_NAMES],
  ] as const) {
    const list = given[name];
    if (Array.isArray(list)) list.forEach((item: unknown, i) => nested(`${name}[${i}].`, item, known));
  }
  return problems;
}

/** The longest unknown name quoted (a key of megabytes is no line an error keeps). */
const NAME_CHARS = 60;

/**
 * One problem per key of `group` that is not in `known`, named as `${where}${key}`; `hide` removes
 * the client secret from a name (a key is the integrator's text and may be anything).
 */
export function unknownNames(
  where: string,
  group: object,
  known: readonly string[],
  hide: (text: string) => string,
  kind = 'an option of the audit',
): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(group)) {
    if (known.includes(key)) continue;
    // Cut once the secret is out: a cut first could keep a few of its characters no scrub tells apart.
    const hidden = hide(key);
    const shown = hidden.length > NAME_CHARS ? `${hidden.slice(0, NAME_CHARS)}...` : hidden;
    const meant = closestName(key, known);
    const hint =
      meant === undefined ? `the options here are ${known.join(', ')}` : `did you mean \`${where}${meant}\`?`;
    problems.push(`\`${where}${shown}\` is not ${kind}: ${hint}`);
  }
  return problems;
}
