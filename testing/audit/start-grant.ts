/**
 * A start the guard asks to confirm: its "Confirm it's you" form, and the grant a user gets for it
 * (press, verify, land) before the start is sent again. Written against the few things of the
 * audit's world it needs, so the world can call it without importing the checks' step-up flow.
 */
import { formsIn } from '../html-forms.ts';
import type { AuditAgent, Answer } from './agent.ts';
import type { AuditAction, ResolvedAuditOptions } from './options.ts';

/** What getting a grant needs of the audit's world. */
export interface GrantingWorld<Attempt> {
  readonly options: Pick<ResolvedAuditOptions, 'actions'>;
  resolve(location: string, base?: string): URL;
  startPath(action: AuditAction): string;
  sameOrigin(): Record<string, string>;
  attemptOf(answer: Answer): Promise<Attempt>;
  walkHostedPage(user: { agent: AuditAgent }, attempt: Attempt): Promise<string>;
}

/** A form of a page: where it posts and its hidden fields. */
export interface PageForm {
  action: string;
  fields: Record<string, string>;
}

/** Every POST form of a page, with its hidden fields (and its button's). */
export function postFormsOf(html: string): PageForm[] {
  return formsIn(html)
    .filter((form) => form.method === 'post')
    .map(({ action, fields }) => ({ action, fields }));
}

/** The kit's intent ids: 32 random bytes, base64url (as its states). */
const INTENT_ID = /^[A-Za-z0-9_-]{43}$/;

/** Whether `form` is the kit's start form carrying a kept request (its `_csrf`, scope and intent id). */
function startsKeptRequest<A>(world: GrantingWorld<A>, answer: Answer, form: PageForm): boolean {
  const target = world.resolve(form.action, answer.url);
  const starts = world.options.actions.map((action) => world.resolve(world.startPath(action)).href);
  const { _csrf: token = '', action: scope = '', intent = '' } = form.fields;
  return (
    starts.includes(`${target.origin}${target.pathname}`) && token !== '' && scope !== '' && INTENT_ID.test(intent)
  );
}

/**
 * The guard's "Confirm it's you" form (it starts a verification for the kept request), if the page
 * is that: a form to the kit's start with an intent id the kit made. A page of the app's own with a
 * form of like fields (an `action`, a button named `intent`) is not the guard asking.
 */
export function confirmItsYouForm<A>(world: GrantingWorld<A>, answer: Answer): PageForm | undefined {
  return postFormsOf(answer.body).find((form) => startsKeptRequest(world, answer, form));
}

/** How a check posts the start form. */
export interface StartInit {
  token?: string | null;
  headers?: Record<string, string>;
  query?: string;
  /** More fields of the form (besides the token, the action and its own fields). */
  fields?: Record<string, string>;
  /** The number typed (an action with an entered destination); default a new one. */
  phone?: string;
  /** The first answer as it is, a "Confirm it's you" page included: no grant is got for it. */
  asIs?: boolean;
}

/** Presses the "Confirm it's you" button, enters the code texted to the user's number and lands: the grant. */
async function pressAndLand<A>(
  world: GrantingWorld<A>,
  user: { agent: AuditAgent },
  action: AuditAction,
  form: PageForm,
): Promise<void> {
  const pressed = await user.agent.postForm(form.action, form.fields, world.sameOrigin());
  const attempt = await world.attemptOf(pressed);
  const landing = await user.agent.request(world.resolve(await world.walkHostedPage(user, attempt)).href);
  if (landing.location === null) {
    throw new Error(`the landing of ${action.name}'s step-up answered ${landing.status} without sending the user back`);
  }
}

/**
 * The grants each browser is getting, by scope: starts of one scope asked to confirm at once (a
 * burst) share one; a start of another scope gets its own, as a grant opens only its scope.
 */
const granting = new WeakMap<AuditAgent, Map<string, Promise<void>>>();

/** The grant of `scope` this browser is getting, begun by `begin` unless one is under way. */
function grantOnce(agent: AuditAgent, scope: string, begin: () => Promise<void>): Promise<void> {
  const scopes = granting.get(agent) ?? new Map<string, Promise<void>>();
  granting.set(agent, scopes);
  let pending = scopes.get(scope);
  if (pending === undefined) {
    pending = begin().finally(() => scopes.delete(scope));
    scopes.set(scope, pending);
  }
  return pending;
}

/**
 * When a start of an action that requires a step-up was answered with "Confirm it's you", gets the
 * user a grant of its scope in this browser as a user does (once for starts of it asked at once) and
 * says so; otherwise false.
 */
export async function grantWhenAsked<A>(
  world: GrantingWorld<A>,
  user: { agent: AuditAgent },
  action: AuditAction,
  answer: Answer,
): Promise<boolean> {
  if (action.requireRecentVerification === undefined) return false;
  const { scope } = action.requireRecentVerification;
  const form = confirmItsYouForm(world, answer);
  if (form === undefined) return false;
  await grantOnce(user.agent, scope, () => pressAndLand(world, user, action, form));
  return true;
}
