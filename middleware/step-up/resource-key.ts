/**
 * The resource key as grants and kept requests are bound to it. `bindTo` reads it from the request
 * (a path segment, a field), so it may be any length, and PostgreSQL's index on the grants holds
 * at most about 2.7 KB a row: a long key is bound by its digest instead, on every store alike.
 */
import { createHash } from 'node:crypto';
import { KitError, KitErrorCode } from '../errors.ts';
import { maskDestination, mayBePhoneNumber } from '../numbers/mask-number.ts';
import { isRecord } from '../options/option-problems.ts';

/** A key longer than this is bound by its digest (at most 768 bytes as UTF-8: well inside the index). */
export const RESOURCE_KEY_MAX_LENGTH = 256;
const DIGEST_PREFIX = 'sha256:';

/** In Unicode mode a surrogate pair is one code point: this matches only a surrogate left alone. */
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Refuses a key holding a lone UTF-16 surrogate (a JSON body's `"\ud800"`): every store writes it
 * as replacement characters, so a grant for it would never match the key read again (the user
 * asked, and texted, again and again), and its digest would be another key's. Refused rather than
 * replaced, so a key never stands for another one.
 */
export function refuseIllFormedKey(key: string): void {
  if (!LONE_SURROGATE.test(key)) return;
  throw new KitError(
    KitErrorCode.InvalidActionParams,
    'The resource bindTo read from this request is not well-formed Unicode (a lone UTF-16 surrogate): no store keeps it as sent, so a grant for it could never be found again; nothing was kept or sent.',
  );
}

/** What a value is, said without the value: a key read from the request may be an account id or a number. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/**
 * Whether `value` is one of the request's own fields as sent (a query's or a body's): an object
 * there is how a parser reads brackets (`?account[x]=1` under Express 4's query parser, an
 * extended form, a JSON body's `{ "account": {...} }`), the user's input and not a hook's slip.
 * Compared as JSON too: Express 5 parses `req.query` anew at each read.
 */
function isSentField(value: object, sent: readonly unknown[]): boolean {
  const fields = sent.flatMap((source) => (isRecord(source) ? Object.values(source) : []));
  if (fields.includes(value)) return true;
  const objects = fields.filter((field) => typeof field === 'object' && field !== null);
  const text = objects.length === 0 ? undefined : jsonOf(value);
  return text !== undefined && objects.some((field) => jsonOf(field) === text);
}

/** How many of the request's values sentScalar looks at: a body of thousands is read no further. */
const SCALARS_LOOKED_AT = 10_000;

/**
 * Whether a number, `true`, `false` or null is a value the request sent (a JSON body's
 * `{ "account": 5 }`, at any depth): the user's input, though not text.
 */
function isSentScalar(value: number | boolean | null, sent: readonly unknown[]): boolean {
  const pending = [...sent];
  for (let looked = 0; pending.length > 0 && looked < SCALARS_LOOKED_AT; looked++) {
    const field = pending.pop();
    if (Object.is(field, value)) return true;
    if (Array.isArray(field)) pending.push(...field);
    else if (isRecord(field)) pending.push(...Object.values(field));
  }
  return false;
}

/** JSON text, or undefined for what has none (a circular record of the app's: its slip, not input). */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * What bindTo returned, unless it is no key. A list, or an object, number, boolean or null that is
 * a value as sent, is the user's input, not a broken hook: a field sent twice
 * (`?account=a&account=b`) names two resources, one sent with brackets (`?account[x]=1`) or as
 * JSON's 5, true or null none, and the request cannot be bound (400, nothing kept or sent). Anything else but a string is the app's code to fix, not the user's
 * input: it fails closed (500), the log naming the guard and the fix.
 */
export function assertResourceKey(
  key: unknown,
  scope: string,
  sent: { query: unknown; body: unknown; params: unknown },
): asserts key is string {
  // Express 5 reads a wildcard (`/files/*path`) as a list of segments: the app's code to fix.
  if (Array.isArray(key) && isRecord(sent.params) && Object.values(sent.params).includes(key)) {
    throw new KitError(
      KitErrorCode.HookFailed,
      `requireRecentVerification({ scope: '${scope}' }): bindTo returned a list read from req.params (Express 5 reads a wildcard, /*name, as a list of path segments), so the request could not be bound to a resource; nothing was kept, sent or run. Return the path as one string (e.g. req.params.name.join('/')).`,
    );
  }
  if (Array.isArray(key)) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'The resource bindTo read from this request names more than one resource (a field sent more than once); nothing was kept or sent.',
    );
  }
  if (typeof key === 'object' && key !== null && isSentField(key, [sent.query, sent.body])) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'The resource bindTo read from this request is a field sent with brackets (read as an object), which names no resource; nothing was kept or sent.',
    );
  }
  const scalar = key === null || typeof key === 'number' || typeof key === 'boolean';
  if (scalar && isSentScalar(key, [sent.query, sent.body])) {
    throw new KitError(
      KitErrorCode.InvalidActionParams,
      'The resource bindTo read from this request is not text (a number, true, false or null sent as JSON), which names no resource; nothing was kept or sent.',
    );
  }
  if (typeof key !== 'string') {
    throw new KitError(
      KitErrorCode.HookFailed,
      `requireRecentVerification({ scope: '${scope}' }): bindTo returned ${kindOf(key)}, so the request could not be bound to a resource; nothing was kept, sent or run. Return the resource key as a string (e.g. String(req.params.account)), or undefined to bind to no resource.`,
    );
  }
}

/**
 * The key itself, or `sha256:<digest>` for a long one. A short key already spelt `sha256:...` is
 * digested too, so no key of the app's can pass for another one's digest.
 */
export function boundResourceKey(key: string): string {
  if (key.length <= RESOURCE_KEY_MAX_LENGTH && !key.startsWith(DIGEST_PREFIX)) return key;
  return `${DIGEST_PREFIX}${createHash('sha256').update(key).digest('base64url')}`;
}

/**
 * A bound key as the kit shows it outside the guard (an outcome event, kit.grants.list): one that
 * may be a phone number (/phones/:number) masked; a `sha256:` digest never a number, shown as bound
 * so the two can be matched. A store of the app's own may answer something else: shown as it is.
 */
export function shownResourceKey<T>(key: T): T | string {
  if (typeof key !== 'string' || key.startsWith(DIGEST_PREFIX)) return key;
  return mayBePhoneNumber(key) ? maskDestination(key) : key;
}
