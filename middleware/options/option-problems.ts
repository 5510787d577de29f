/**
 * The one way the kit, the sweep, the worker and the sweep job report option problems: every
 * check adds to one list, and one KitError `invalid_options` names each problem and its fix.
 * Checkers return the narrowed value (or the default), so callers need no casts.
 */
import { closestName } from '../closest-name.ts';
import { KitError, KitErrorCode, redactSecrets } from '../errors.ts';
import { maskNumbersInPath, maskNumbersInText } from '../numbers/mask-number.ts';

/**
 * The problem of a baseUrl that carries the client secret anywhere (userinfo, path, query): one
 * sentence for the kit's options and the client's, which both check it.
 */
export const BASE_URL_CARRIES_SECRET =
  '`baseUrl` must not carry the client secret (it is not shown): pass it only as `clientSecret`, sent only in the Authorization header.';

/** A control character, refused in names, keys and credentials. */
export const CONTROL = /[\u0000-\u001f\u007f]/;

export class OptionProblems {
  readonly #problems: string[] = [];
  readonly #secret: string[];

  /**
   * `where` names the call in the error, e.g. "createVerificationKit". `secret` is the client
   * secret the call was given: one too short to accept is not remembered as a secret, yet the
   * message refusing it must not quote it through another option either.
   */
  constructor(
    readonly where: string,
    secret?: unknown,
  ) {
    this.#secret = typeof secret === 'string' ? [secret, secret.trim()] : [];
  }

  add(problem: string): void {
    this.#problems.push(problem);
  }

  get count(): number {
    return this.#problems.length;
  }

  /** Throws KitError invalid_options listing every problem, if there is any. */
  throwIfAny(): void {
    if (this.#problems.length === 0) return;
    throw invalidOptions(
      this.where,
      this.#problems.map((problem) => withoutStartsAtCuts(redactSecrets(problem, this.#secret), this.#secret)),
    );
  }
}

/**
 * `problem` without a start of any of `secrets` left where `quote` cut a value ("…:Sh0rtS3c…"): a
 * secret too short to be remembered is redacted whole only, and the cut leaves a part of it.
 */
function withoutStartsAtCuts(problem: string, secrets: readonly string[]): string {
  let out = problem;
  for (const secret of secrets) {
    const quoted = JSON.stringify(secret).slice(1, -1);
    for (let length = quoted.length - 1; length > 0; length--) {
      const cut = `${quoted.slice(0, length)}…`;
      if (out.includes(cut)) out = out.split(cut).join('[redacted]…');
    }
  }
  return out;
}

/** One KitError for a list of option problems (one line, or one bullet each). */
export function invalidOptions(where: string, problems: readonly string[]): KitError {
  const listed = problems.length === 1 ? problems[0] : `\n  - ${problems.join('\n  - ')}`;
  return new KitError(KitErrorCode.InvalidOptions, `${where}: ${listed}`);
}

/**
 * A value as it may appear in a message: strings quoted (the client secret redacted and any phone
 * number masked before the cut, which would leave a part of either unrecognised), anything else by its type.
 */
export function quote(value: unknown): string {
  if (typeof value === 'string') {
    const text = shownText(value);
    return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
  }
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  return typeof value;
}

/**
 * A value a whole-number check refuses, as its message shows it: a number (or a BigInt) as written
 * unless it may be a phone number, anything else as `quote` shows it. Never JSON.stringify, which
 * repeats a string and an object whole and throws on a BigInt.
 */
export function shownNumber(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return maskNumbersInText(String(value));
  return quote(value);
}

/** A text of the app's as a message shows it: a number as a word, or as a part of a path or a URL's query, masked. */
function shownText(value: string): string {
  return maskNumbersInText(maskNumbersInPath(redactSecrets(value)));
}

export function isFunction(value: unknown): value is (...args: never[]) => unknown {
  return typeof value === 'function';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` has every named method; a getter that throws (a revoked Proxy) means it has not. */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  try {
    return isRecord(value) && names.every((name) => isFunction(value[name]));
  } catch {
    return false;
  }
}

/** A group of options (`routes`, `csrf`...): an object, or {} when left out. */
export function optionGroup(problems: OptionProblems, name: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (isRecord(value)) return value;
  problems.add(`\`${name}\` must be an object of options, or omitted: got ${quote(value)}.`);
  return {};
}

/**
 * Keys of a group (`name` '' for a call's own options) that are not options: each reported, never
 * its value, with the name it most likely meant (a misspelt one would drop its setting without a
 * word) or else the ones that are.
 */
export function checkKnownKeys(
  problems: OptionProblems,
  name: string,
  group: Record<string, unknown>,
  known: readonly string[],
): void {
  for (const key of Object.keys(group)) {
    if (known.includes(key)) continue;
    // A key is the app's text: shown as written only when plain and short.
    const plain = !CONTROL.test(key) && key.length <= 64 ? shownText(key) : quote(key);
    const meant = closestName(key, known);
    const hint = meant === undefined ? `; use ${known.join(', ')}.` : `: did you mean \`${meant}\`?`;
    problems.add(`\`${name === '' ? plain : `${name}.${plain}`}\` is not an option${hint}`);
  }
}

/** An optional function; undefined when left out or wrong (wrong is reported). */
export function optionalFunction<F extends (...args: never[]) => unknown>(
  problems: OptionProblems,
  name: string,
  value: F | undefined,
  shape = 'a function',
): F | undefined {
  if (value === undefined || isFunction(value)) return value;
  problems.add(`\`${name}\` must be ${shape}, or omitted.`);
  return undefined;
}

/** A number >= 0 (or > 0), or the fallback when left out or wrong (wrong is reported). */
export function nonNegative(
  problems: OptionProblems,
  name: string,
  value: unknown,
  fallback: number,
  allowZero = true,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    problems.add(`\`${name}\` must be a ${allowZero ? 'non-negative' : 'positive'} number: got ${quote(value)}.`);
    return fallback;
  }
  return value;
}

/** A whole number within [min, max], or the fallback (wrong is reported with an example fix). */
export function integerInRange(
  problems: OptionProblems,
  name: string,
  value: unknown,
  range: { min: number; max: number; fallback: number; unit?: string },
): number {
  if (value === undefined) return range.fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max) return value;
  const example = range.min === 0 ? range.max : range.min;
  problems.add(
    `\`${name}\` must be an integer from ${range.min} to ${range.max}${range.unit ?? ''}; got ${shownNumber(value)}. ` +
      `Pass e.g. { ${name}: ${example} } or leave it out for the default.`,
  );
  return range.fallback;
}

/**
 * The options of a call that takes many (`createVerificationKit`, `createStartLimits`): a key that
 * is none of them is a misspelling whose setting would be lost without a word (`hookTimeout` for
 * `hookTimeouts`), reported with the name it most likely meant.
 */
export function checkOptionNames(
  problems: OptionProblems,
  group: Record<string, unknown>,
  known: readonly string[],
  prefix = '',
): void {
  for (const key of Object.keys(group)) {
    if (known.includes(key)) continue;
    const meant = closestName(key, known);
    const hint = meant === undefined ? `the options are ${known.join(', ')}` : `did you mean \`${prefix}${meant}\`?`;
    problems.add(`${quote(`${prefix}${key}`)} is not an option: ${hint}`);
  }
}
