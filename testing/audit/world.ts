/**
 * What every check shares during one run: the recorder, fresh users, the scripted flow (sign in,
 * start, verify on the hosted page or through the emulator, land) and the effect counter.
 */
import { randomBytes } from 'node:crypto';
import { emulatorControl, type ControlSession, type EmulatorControl } from '../../emulator/control/control-client.ts';
import { withoutUrlPasswords } from '../../middleware/printable-errors.ts';
import { AuditAgent, parseHandoffPage, type Answer } from './agent.ts';
import { callCount, callHook, callSync, fulfilmentsOf, linesOf } from './hooks.ts';
import { loopbackBlock } from './client-addresses.ts';
import { walkHostedPage } from './hosted-page.ts';
import { BodyBudget, type KeptExchange } from './kept-bodies.ts';
import { maskEveryNumber, NumberMask } from './number-mask.ts';
import { TokenMask } from './token-mask.ts';
import type { AuditAction, ResolvedAuditOptions } from './options.ts';
import { scrubSecret, secretForms, type SecretForm } from './secret.ts';
import { signInByForm, startTokenShown } from './sign-in-form.ts';
import { confirmItsYouForm, grantWhenAsked, type StartInit } from './start-grant.ts';
import { digitsOf, TypedNumberRange } from './typed-number-range.ts';

/** The start form's field a typed number travels in (the kit's ENTERED_NUMBER_FIELD). */
export const ENTERED_NUMBER_FIELD = 'phone';

export { digitsOf };

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
  readonly exchanges: KeptExchange[] = [];
  readonly control: EmulatorControl;
  /** Every handoff the app handed out (from its start answers). */
  readonly handoffs = new Set<string>();
  readonly runId = randomBytes(3).toString('hex');
  #users = 0;
  #starts = 0;
  readonly #typedNumbers = new TypedNumberRange();
  /** The numbers typed and held this run, masked in everything the audit reports. */
  readonly #numberMask = new NumberMask();
  /** The landing path, learnt from the first session the emulator shows. */
  returnUrl: string | undefined;
  /** Every spelling of the client secret (searched for, and scrubbed from what the audit reports). */
  readonly secretForms: readonly SecretForm[];
  /** The second octet of this run's loopback client addresses, once binding to them was confirmed. */
  #addressBlock: number | undefined;
  #agents = 0;
  /** Bounds the answers' bodies the run keeps. */
  readonly #bodies: BodyBudget;
  /** The tokens this run's users hold (start tokens, intents, session ids, states), masked in everything it reports. */
  readonly #tokens: TokenMask;
  /** How the audit's browsers reach the app: said in the start-limit checks' evidence. */
  clientAddressNote = 'every browser of the audit connects from one address';

  constructor(readonly options: ResolvedAuditOptions) {
    this.control = emulatorControl(options.emulatorUrl);
    this.secretForms = secretForms(options.clientId, options.clientSecret);
    this.#bodies = new BodyBudget(this.secretForms, options.appOrigin);
    this.#tokens = new TokenMask(options.appOrigin);
  }

  /**
   * `text` without the client secret in any spelling, nor any URL's password (a `serviceUrl`
   * through a proxy, a database URL an error quotes), nor a number of the run or any other in
   * full, nor a token its users hold: for everything the audit reports.
   */
  scrub(text: string): string {
    // A URL's password goes first: a run of digits in it, masked as a number, would leave the URL unread.
    const clean = withoutUrlPasswords(this.#tokens.mask(scrubSecret(this.secretForms, text)));
    // Any number is masked whoever holds it, in any form: a page may show a user's own.
    return maskEveryNumber(this.#numberMask.mask(clean));
  }

  /**
   * Each browser of the audit connects from its own loopback address (127.x.y.z) when the system
   * can bind them, so the app's per-IP start budget it spends is never a real user's. Returns why
   * the run cannot go on, if so.
   */
  async chooseClientAddresses(): Promise<string | undefined> {
    const { block, note, stop } = await loopbackBlock(this.options.appUrl);
    this.#addressBlock = block;
    this.clientAddressNote = note;
    return stop;
  }

  /** A loopback address no browser of this run used yet (undefined when the system's own is used). */
  newClientAddress(): string | undefined {
    this.#agents += 1;
    const n = this.#agents;
    return this.#addressBlock === undefined
      ? undefined
      : `127.${this.#addressBlock}.${1 + Math.floor(n / 250)}.${2 + (n % 250)}`;
  }

  /** A new browser: its own cookie jar, connecting from its own address unless `from` is given. */
  agent(defaultHeaders: Record<string, string> = {}, from = this.newClientAddress()): AuditAgent {
    return new AuditAgent(
      this.options.appUrl,
      (x) => this.exchanges.push(this.#bodies.keep(this.#tokens.holding(x))),
      this.options.timeoutMs,
      defaultHeaders,
      from,
    );
  }

  /** Keeps what an attempt's tokens are (masked in the report) and learns the landing path from the first. */
  recordAttempt(session: ControlSession): void {
    this.#tokens.addAttempt(session);
    this.returnUrl ??= session.returnUrl;
  }

  /** A user name no check used before (each user has its own start budget). */
  newUserName(): string {
    this.#users += 1;
    return `audit${this.runId}${this.#users}`;
  }

  async signIn(name = this.newUserName(), agent = this.agent()): Promise<AuditUser> {
    const { signIn } = this.options;
    const { csrf } =
      typeof signIn === 'function'
        ? await callHook(`your signIn(agent, '${name}')`, this.options.timeoutMs * 3, async () => {
            // Its answer is yours too: a csrf getter that throws is your signIn failing.
            const { csrf } = await signIn(agent, name);
            return { csrf };
          })
        : await signInByForm(agent, name, signIn, {
            timeoutMs: this.options.timeoutMs,
            sameOrigin: this.sameOrigin(),
            startPath: this.startPath(this.firstAction()),
          });
    if (typeof csrf !== 'string' || csrf === '') throw new Error(`signIn(${name}) gave no start token (csrf)`);
    this.#tokens.add('start token', csrf);
    return { name, agent, csrf };
  }

  /**
   * The start token the app's page with the start form shows `agent` now (`signIn.csrfFrom`, or `/`
   * when signIn is yours): a browser signed in as someone since it last read one holds a new one.
   */
  async startTokenShownTo(agent: AuditAgent, action: AuditAction = this.firstAction()): Promise<string | undefined> {
    const { signIn } = this.options;
    const page = typeof signIn === 'function' ? '/' : (signIn.csrfFrom ?? '/');
    return startTokenShown(agent, page, this.startPath(action));
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

  /** The form's fields; an action with an entered destination gets `phone` (a new number unless given). */
  fieldsOf(action: AuditAction, phone?: string): Record<string, string> {
    this.#starts += 1;
    const given = action.fields;
    const n = this.#starts;
    const fields =
      typeof given === 'function' ? callSync(`your fields(${n}) of action ${action.name}`, () => given(n)) : given;
    // A number given (a premium-rate one) is masked in the report as the ones drawn are.
    if (phone !== undefined) this.#numberMask.add(phone);
    const typed: Record<string, string> =
      action.enteredNumber === undefined ? {} : { [ENTERED_NUMBER_FIELD]: phone ?? this.newNumber() };
    return { action: action.name, ...fields, ...typed };
  }

  /**
   * A mobile number no start of this run typed before, in international form (+44 7400 1xxxxx, a
   * UK mobile range): each has its own per-destination budget.
   */
  newNumber(): string {
    const number = this.#typedNumbers.next();
    this.#numberMask.add(number);
    return number;
  }

  /** The number the app holds for a user of the audit (the action's `enteredNumber.numberOf`), as digits. */
  async numberOf(action: AuditAction, user: AuditUser): Promise<string | null> {
    const read = action.enteredNumber?.numberOf;
    if (read === undefined) throw new Error(`action ${action.name} has no enteredNumber`);
    const held = await callHook(`your enteredNumber.numberOf('${user.name}')`, this.options.timeoutMs, () =>
      read(user.name),
    );
    if (typeof held !== 'string') return null;
    this.#numberMask.add(held);
    return digitsOf(held);
  }

  /**
   * POSTs the start form as the app's own page would; `query` is appended to the path. A start the
   * app asks to confirm (an action whose start requires a step-up) gets the grant as a user does and
   * is posted again, as every check but those of the requirement itself (`asIs`) starts it.
   */
  async postStart(user: AuditUser, action: AuditAction = this.firstAction(), init: StartInit = {}): Promise<Answer> {
    const answer = await this.postStartOnce(user, action, init);
    if (init.asIs === true || !(await grantWhenAsked(this, user, action, answer))) return answer;
    return this.postStartOnce(user, action, init);
  }

  private postStartOnce(user: AuditUser, action: AuditAction, init: StartInit): Promise<Answer> {
    const token = init.token === undefined ? user.csrf : init.token;
    const fields = {
      ...init.fields,
      ...(token === null ? {} : { _csrf: token }),
      ...this.fieldsOf(action, init.phone),
    };
    const path = `${this.startPath(action)}${init.query === undefined ? '' : `?${init.query}`}`;
    return user.agent.postForm(path, fields, { ...this.sameOrigin(), ...init.headers });
  }

  /** The attempt a start answer handed out, as the emulator has it; throws unless the answer is the handoff page. */
  async attemptOf(answer: Answer): Promise<StartedAttempt> {
    const page = parseHandoffPage(answer.body);
    if (answer.status !== 200 || page === undefined) {
      if (confirmItsYouForm(this, answer) !== undefined) {
        throw new Error(
          'the start answered the step-up\'s "Confirm it\'s you" page: give the action `requireRecentVerification: { scope, maxAge }` in `actions`, as your kit has it',
        );
      }
      // The app's page is not quoted: it may hold the secret in a spelling no search knows.
      const type = this.scrub(answer.headers['content-type'] ?? 'no content type');
      const location = answer.location === null ? '' : `, Location ${this.scrub(answer.location)}`;
      throw new Error(
        `the start answered ${answer.status} (${type}${location}), not the kit's handoff page (its body is not shown)`,
      );
    }
    this.handoffs.add(page.handoff);
    const session = await this.control.sessionByHandoff(page.handoff);
    this.recordAttempt(session);
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
  walkHostedPage(user: AuditUser, attempt: StartedAttempt): Promise<string> {
    return walkHostedPage(this.control, user.agent, attempt);
  }

  /** GET the landing with exactly this query string. */
  land(user: AuditUser | AuditAgent, query: string, headers: Record<string, string> = {}): Promise<Answer> {
    const agent = user instanceof AuditAgent ? user : user.agent;
    return agent.request(`${this.landingPath()}?${query}`, { headers });
  }

  /** GET the attempt's true return link, with `extra` appended to its query. */
  landOn(
    user: AuditUser | AuditAgent,
    attempt: ControlSession,
    extra = '',
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    return this.land(user, new URL(attempt.returnLocation).search.slice(1) + extra, headers);
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
    const { probe, kit, timeoutMs } = this.options;
    if (probe !== undefined) return callCount(`your probe('${sessionId}')`, timeoutMs, () => probe(sessionId));
    const what = `kit.attempts.get('${sessionId}')`;
    return fulfilmentsOf(what, await callHook(what, timeoutMs, () => kit?.attempts?.get(sessionId)));
  }

  /** Your app's log lines so far (`logs`), none when it was not given. */
  async logLines(): Promise<readonly string[]> {
    const { logs, timeoutMs } = this.options;
    if (logs === undefined) return [];
    return linesOf('your logs()', await callHook('your logs()', timeoutMs, logs));
  }

  /** A URL on the app resolved from a Location. */
  resolve(location: string, base = this.options.appUrl): URL {
    return new URL(location, base);
  }
}
