/** The options of kit.requireRecentVerification, checked when it is called (at route setup). */
import type { Request, RequestHandler } from 'express';
import type { KitContext } from '../context.ts';
import { isFunction, isRecord, OptionProblems, quote } from '../options/option-problems.ts';
import type { StepUpStore } from '../store/types.ts';
import type { ScopeDefinition } from '../types.ts';
import { boundedStepUp } from './bounded-step-up.ts';

/** What a guarded route requires: a verification of `scope`, recent enough, for the same resource. */
export interface RecentVerificationOptions {
  /** A scope declared in the kit's `scopes` option. */
  scope: string;
  /**
   * Seconds (as OpenID Connect's `max_age`): a grant opens the route only while its verification
   * was started at most this long ago. Expiry is absolute: using a grant does not renew it.
   */
  maxAge: number;
  /**
   * The resource a grant is bound to (an account id, a payee), read from the request; a grant for
   * one key never opens the route for another. Default: none (one key for the whole scope).
   */
  bindTo?: (req: Request) => string | undefined | Promise<string | undefined>;
  /**
   * The methods the guard applies to, of GET, HEAD, POST, PUT, PATCH, DELETE; those left out pass.
   * Default: all six. Any other method (OPTIONS, PROPFIND, ...) is always guarded, as a form.
   */
  methods?: readonly string[];
  /** Answers a signed-in user without a phone number. Default: a 403 page; never a silent pass. */
  onUnenrolled?: RequestHandler;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** The methods `methods` may leave out; the guard applies to every other one whatever it says. */
export const GUARDABLE_METHODS: readonly string[] = METHODS;
/** A day: longer than any "recent" a guard should ask for. */
const MAX_AGE_LIMIT_SECONDS = 24 * 60 * 60;
/** How long a grant can open anything: past it no guard or action reads it, and the sweep deletes it. */
export const GRANT_USABLE_MS = MAX_AGE_LIMIT_SECONDS * 1000;

export interface ResolvedGuard {
  scope: ScopeDefinition;
  stepUp: StepUpStore;
  maxAgeMs: number;
  maxAgeSeconds: number;
  bindTo: RecentVerificationOptions['bindTo'];
  methods: ReadonlySet<string>;
  onUnenrolled: RequestHandler | undefined;
}

function checkMethods(problems: OptionProblems, methods: unknown): ReadonlySet<string> {
  if (methods === undefined) return new Set(METHODS);
  const known = METHODS as readonly unknown[];
  if (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => known.includes(m))) {
    problems.add(`\`methods\` must be a non-empty list of ${METHODS.join(', ')} (upper case): got ${quote(methods)}.`);
    return new Set(METHODS);
  }
  const set = new Set<string>(methods as string[]);
  // HEAD is GET without a body: guarding one and not the other would leave a way round.
  if (set.has('GET')) set.add('HEAD');
  return set;
}

/** What is wrong with a guard's `scope` (the text after its name), or undefined when it names a declared one. */
export function scopeProblem(scopes: ReadonlyMap<string, ScopeDefinition>, scope: unknown): string | undefined {
  if (typeof scope === 'string' && scopes.has(scope)) return undefined;
  const declared = [...scopes.keys()];
  return (
    "must name a scope declared in createVerificationKit's `scopes` option " +
    `(${declared.length === 0 ? 'none is declared' : `declared: ${declared.join(', ')}`}): got ${quote(scope)}.`
  );
}

/** What is wrong with a guard's `maxAge` (the text after its name), or undefined when it is usable. */
export function maxAgeProblem(maxAge: unknown): string | undefined {
  if (typeof maxAge === 'number' && Number.isInteger(maxAge) && maxAge >= 1 && maxAge <= MAX_AGE_LIMIT_SECONDS) {
    return undefined;
  }
  return `must be a whole number of seconds from 1 to ${MAX_AGE_LIMIT_SECONDS} (e.g. 600 for ten minutes): got ${quote(maxAge)}.`;
}

export function resolveGuard<Tx>(context: KitContext<Tx>, options: RecentVerificationOptions): ResolvedGuard {
  const problems = new OptionProblems('requireRecentVerification');
  const given: unknown = options;
  if (!isRecord(given)) problems.add('options must be an object { scope, maxAge, bindTo?, methods?, onUnenrolled? }.');
  const o = isRecord(given) ? given : {};
  const scope = typeof o.scope === 'string' ? context.scopes.get(o.scope) : undefined;
  const scopeWrong = scopeProblem(context.scopes, o.scope);
  if (scopeWrong !== undefined) problems.add(`\`scope\` ${scopeWrong}`);
  const maxAge = o.maxAge;
  const maxAgeWrong = maxAgeProblem(maxAge);
  if (maxAgeWrong !== undefined) problems.add(`\`maxAge\` ${maxAgeWrong}`);
  if (o.bindTo !== undefined && !isFunction(o.bindTo)) {
    problems.add('`bindTo` must be a function (req) => resource key (string), or omitted.');
  }
  if (o.onUnenrolled !== undefined && !isFunction(o.onUnenrolled)) {
    problems.add('`onUnenrolled` must be Express middleware (req, res, next), or omitted.');
  }
  const methods = checkMethods(problems, o.methods);
  const { stepUp } = context.store;
  if (stepUp === undefined)
    problems.add("the kit's store keeps no step-up grants: use the SQLite or PostgreSQL store.");
  problems.throwIfAny();
  // Both were checked above; the narrowing is for the compiler.
  if (scope === undefined || stepUp === undefined) throw new Error('unreachable: checked above');
  return {
    scope,
    // A request waits on the store no longer than hookTimeouts.store.
    stepUp: boundedStepUp(stepUp, context),
    maxAgeMs: (maxAge as number) * 1000,
    maxAgeSeconds: maxAge as number,
    bindTo: o.bindTo as RecentVerificationOptions['bindTo'],
    methods,
    onUnenrolled: o.onUnenrolled as RequestHandler | undefined,
  };
}
