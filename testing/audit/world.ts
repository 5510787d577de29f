/**
 * What every check shares during one run: the recorder, fresh users, the scripted flow (sign in,
 * start, verify on the hosted page or through the emulator, land) and the effect counter.
 */
import { randomBytes } from 'node:crypto';
import { emulatorControl, type ControlSession, type EmulatorControl } from '../../emulator/control/control-client.ts';
import { AuditAgent, hiddenField, parseHandoffPage, type Answer, type Exchange } from './agent.ts';
import type { AuditAction, ResolvedAuditOptions, SignInForm } from './options.ts';

/** An attempt the audit started: the handoff page's values and the session as the emulator has it. */
export interface StartedAttempt extends ControlSession {
  verifyUrl: string;
  handoff: string;
  answer: Answer;
}

/** A signed-in test user: its agent (cookie jar) and the kit's start token. */
export interface AuditUser {
  name: string;
  agent: AuditAgent;
  csrf: string;
}

export class AuditWorld {
  readonly exchanges: Exchange[] = [];
  readonly control: EmulatorControl;
  /** Every handoff the app handed out (from its start answers). */
  readonly handoffs = new Set<string>();
  readonly runId = randomBytes(3).toString('hex');
  #users = 0;
  #starts = 0;
  /** The landing path, learnt from the first session the emulator shows. */
  returnUrl: string | undefined;

  constructor(readonly options: ResolvedAuditOptions) {
    this.control = emulatorControl(options.emulatorUrl);
  }

  agent(defaultHeaders: Record<string, string> = {}): AuditAgent {
    return new AuditAgent(this.options.appUrl, (x) => this.exchanges.push(x), this.options.timeoutMs, defaultHeaders);
  }

  /** A user name no check used before (each user has its own start budget). */
  newUserName(): string {
    this.#users += 1;
    return `audit${this.runId}${this.#users}`;
  }

  async signIn(name = this.newUserName(), agent = this.agent()): Promise<AuditUser> {
    const { signIn } = this.options;
    const { csrf } =
      typeof signIn === 'function' ? await signIn(agent, name) : await this.signInByForm(agent, name, signIn);
    if (typeof csrf !== 'string' || csrf === '') throw new Error(`signIn(${name}) gave no start token (csrf)`);
    return { name, agent, csrf };
  }

  private async signInByForm(agent: AuditAgent, user: string, form: SignInForm): Promise<{ csrf: string }> {
    const page = await agent.request(form.path);
    const token = hiddenField(page.body, form.tokenField ?? '_csrf');
    const answer = await agent.postForm(
      form.action ?? form.path,
      { ...(token === undefined ? {} : { [form.tokenField ?? '_csrf']: token }), ...form.fields(user) },
      this.sameOrigin(),
    );
    if (answer.status >= 400) throw new Error(`sign-in as ${user} answered ${answer.status}`);
    const home = await agent.request(form.csrfFrom ?? '/');
    const csrf = hiddenField(home.body, '_csrf', this.startPath(this.firstAction()));
    if (csrf === undefined) throw new Error(`no start form with a _csrf field on ${form.csrfFrom ?? '/'}`);
    return { csrf };
  }

  /** The action the stale-intent and sweep checks use (the options guarantee there is one). */
  firstAction(): AuditAction {
    const [first] = this.options.actions;
    if (first === undefined) throw new Error('no action to start');
    return first;
  }

  sameOrigin(): Record<string, string> {
    return { origin: this.options.appOrigin, 'sec-fetch-site': 'same-origin' };
  }

  startPath(action: AuditAction): string {
    return action.path ?? '/verify/start';
  }

  fieldsOf(action: AuditAction): Record<string, string> {
    this.#starts += 1;
    const fields = typeof action.fields === 'function' ? action.fields(this.#starts) : action.fields;
    return { action: action.name, ...fields };
  }

  /** POSTs the start form as the app's own page would; `query` is appended to the path. */
  postStart(
    user: AuditUser,
    action: AuditAction = this.firstAction(),
    init: { token?: string | null; headers?: Record<string, string>; query?: string } = {},
  ): Promise<Answer> {
    const token = init.token === undefined ? user.csrf : init.token;
    const fields = { ...(token === null ? {} : { _csrf: token }), ...this.fieldsOf(action) };
    const path = `${this.startPath(action)}${init.query === undefined ? '' : `?${init.query}`}`;
    return user.agent.postForm(path, fields, { ...this.sameOrigin(), ...init.headers });
  }

  /** The attempt a start answer handed out, as the emulator has it; throws unless the answer is the handoff page. */
  async attemptOf(answer: Answer): Promise<StartedAttempt> {
    const page = parseHandoffPage(answer.body);
    if (answer.status !== 200 || page === undefined) {
      throw new Error(`the start answered ${answer.status}, not the kit's handoff page: ${answer.body.slice(0, 200)}`);
    }
    this.handoffs.add(page.handoff);
    const session = await this.control.sessionByHandoff(page.handoff);
    this.returnUrl ??= session.returnUrl;
    return { ...session, ...page, answer };
  }

  async start(user: AuditUser, action?: AuditAction, query?: string): Promise<StartedAttempt> {
    return this.attemptOf(await this.postStart(user, action, query === undefined ? {} : { query }));
  }

  /** Ends the session as verified through the emulator (as if the right code was entered). */
  async verified(user: AuditUser, action?: AuditAction): Promise<StartedAttempt> {
    const attempt = await this.start(user, action);
    await this.control.completeSession(attempt.sessionId, 'verified');
    return attempt;
  }

  /**
   * The hosted page for real: redeems the handoff, types the texted code, returns where the service
   * sends the browser back (the enrol offer, if shown, is declined).
   */
  async walkHostedPage(user: AuditUser, attempt: StartedAttempt): Promise<string> {
    const page = await user.agent.postForm(attempt.verifyUrl, { hx: attempt.handoff });
    const binding = hiddenField(page.body, 'page_binding');
    if (page.status !== 200 || binding === undefined) throw new Error(`the hosted page answered ${page.status}`);
    const code = await this.control.latestCode({ sessionId: attempt.sessionId });
    const answer = await user.agent.postForm(`${attempt.verifyUrl}/code`, { page_binding: binding, code });
    if (answer.status === 303 && answer.location !== null) return answer.location;
    const next = hiddenField(answer.body, 'page_binding') ?? binding;
    const done = await user.agent.postForm(`${attempt.verifyUrl}/continue`, { page_binding: next });
    if (done.status !== 303 || done.location === null) {
      throw new Error(`the hosted page's continue answered ${done.status}`);
    }
    return done.location;
  }

  /** GET the landing with exactly this query string. */
  land(user: AuditUser | AuditAgent, query: string, headers: Record<string, string> = {}): Promise<Answer> {
    const agent = user instanceof AuditAgent ? user : user.agent;
    return agent.request(`${this.landingPath()}?${query}`, { headers });
  }

  landOn(user: AuditUser | AuditAgent, attempt: ControlSession, extra = ''): Promise<Answer> {
    return this.land(user, new URL(attempt.returnLocation).search.slice(1) + extra);
  }

  /** The landing path, or undefined before any attempt was started. */
  returnUrlPath(): string | undefined {
    return this.returnUrl === undefined ? undefined : new URL(this.returnUrl).pathname;
  }

  landingPath(): string {
    if (this.returnUrl === undefined) throw new Error('no attempt started yet: the landing path is unknown');
    return new URL(this.returnUrl).pathname;
  }

  /** The action's real effects for an attempt: the probe's count, or 1 when the kit marked it fulfilled. */
  async effects(sessionId: string): Promise<number> {
    if (this.options.probe !== undefined) return this.options.probe(sessionId);
    const summary = await this.options.kit?.attempts.get(sessionId);
    return summary?.fulfilledAt === null || summary === undefined ? 0 : 1;
  }

  /** A URL on the app resolved from a Location. */
  resolve(location: string, base = this.options.appUrl): URL {
    return new URL(location, base);
  }
}
