/**
 * Typed calls to a running emulator's control API (`/_control`, loopback only), for integrators'
 * own test suites: end a session as if on the hosted page, read the code that was texted, move the
 * virtual clock, inject faults. Works for an emulator in this process or one started elsewhere.
 */
import type { FaultSettings, Stats } from './faults.ts';
import type { SmsMessage } from '../sms/outbox.ts';
import type { RateLimitSettings } from '../config/rate-limit-settings.ts';

export type { FaultSettings, Stats } from './faults.ts';
export type { SmsMessage } from '../sms/outbox.ts';
export type { RateLimitSettings } from '../config/rate-limit-settings.ts';

/** Failure reasons the spec names; any other string is accepted too (to test unknown reasons). */
export type FailureReason = 'otp_locked' | 'device_changed' | 'session_binding_failed' | (string & {});

/** A session as the control API shows it: enough to land on it (never its code or handoff). */
export interface ControlSession {
  sessionId: string;
  status: 'pending' | 'verified' | 'failed';
  reason?: string;
  state: string;
  userRef: string;
  returnUrl: string;
  /** Where the hosted page sends the browser back: returnUrl?session_id=…&state=… */
  returnLocation: string;
}

/** Which texted code to read: the latest one for a session, or for a phone destination. */
export type CodeQuery = { sessionId: string } | { destination: string };

export interface EmulatorControl {
  /** Ends a pending session as `verified` (as if the right code was entered on the hosted page). */
  completeSession(sessionId: string, outcome: 'verified'): Promise<void>;
  /** Ends a pending session as `failed` with `reason`. */
  completeSession(sessionId: string, outcome: 'failed', reason: FailureReason): Promise<void>;
  /**
   * Moves a session that already ended to another end (`verified` to `failed` or back, or another
   * reason), a move the service's interface leaves open; a pending session ends as `completeSession`.
   */
  moveEndedSession(sessionId: string, outcome: 'verified' | 'failed', reason?: FailureReason): Promise<void>;
  /** The session a handoff was issued for (the handoff goes in the request body); throws when none. */
  sessionByHandoff(handoff: string): Promise<ControlSession>;
  /** From now on this session's status reads echo `echo`'s state and/or userRef instead of the stored ones. */
  tamperEcho(sessionId: string, echo: { state?: string; userRef?: string }): Promise<ControlSession>;
  /** The code of the newest SMS for the session or destination; throws when none was sent. */
  latestCode(query: CodeQuery): Promise<string>;
  /** Every SMS sent since start (or the last reset) and less than 24 h ago on its clock, oldest first. */
  sentMessages(): Promise<SmsMessage[]>;
  /** Moves the emulator's virtual clock forward (handoff TTL, code validity, the 24 h window). */
  advanceClock(seconds: number): Promise<void>;
  /** Changes fault settings (counts apply to the next N calls); returns the settings now in force. */
  injectFaults(faults: Partial<FaultSettings>): Promise<FaultSettings>;
  /**
   * Changes the per-client rate limits (requests per second, 0 = none; beyond them 429 with
   * Retry-After); returns the limits now in force. `reset()` restores the ones started with.
   */
  setRateLimits(limits: Partial<RateLimitSettings>): Promise<RateLimitSettings>;
  /** Call counts: creates, replays, SMS sent (also per Idempotency-Key), status reads, verify posts. */
  stats(): Promise<Stats>;
  /** Forgets sessions, messages, passkeys, stats and faults, and resets the clock. */
  reset(): Promise<void>;
}

/** Raised when the emulator refuses a control call; `code` is its `errorCode`. */
export class EmulatorControlError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'EmulatorControlError';
    this.status = status;
    this.code = code;
  }
}

function matches(query: CodeQuery, message: SmsMessage): boolean {
  return 'sessionId' in query ? message.sessionId === query.sessionId : message.to === query.destination;
}

/** Options of emulatorControl. */
export interface EmulatorControlOptions {
  /**
   * Longest wait for one control call's whole answer, in whole milliseconds (default 10000): an
   * address that takes the connection and never answers (not the emulator, or a stuck one) fails
   * the call instead of holding a test run for minutes.
   */
  timeoutMs?: number;
}

const DEFAULT_CONTROL_TIMEOUT_MS = 10_000;

/** The control API at one address, each call within one deadline. */
interface ControlTarget {
  url: string;
  base: string;
  timeoutMs: number;
}

function timeoutOf(options: EmulatorControlOptions): number {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS;
  if (Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 2_147_483_647) return timeoutMs;
  throw new TypeError(
    `emulatorControl: \`timeoutMs\` must be whole milliseconds from 1 to 2147483647: got ${String(timeoutMs)}.`,
  );
}

/** The answer's status and text, read within the deadline. */
async function answerWithin(
  { url, base, timeoutMs }: ControlTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; ok: boolean; text: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      signal: abort.signal,
      // Every control POST carries JSON (the emulator refuses the content types a page on another site could send).
      ...(method === 'GET'
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) }),
    });
    return { status: response.status, ok: response.ok, text: await response.text() };
  } catch (error) {
    if (!abort.signal.aborted) throw error;
    throw new EmulatorControlError(
      0,
      'control_timeout',
      `Emulator control ${method} ${path} did not answer within ${timeoutMs} ms: is ${url} the emulator, started with control: true?`,
    );
  } finally {
    clearTimeout(timer);
  }
}

async function controlCall<T>(target: ControlTarget, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await answerWithin(target, method, path, body);
  const { text } = response;
  let parsed: { errorCode?: string; message?: string };
  try {
    parsed = (text === '' ? {} : JSON.parse(text)) as { errorCode?: string; message?: string };
  } catch {
    throw new EmulatorControlError(
      response.status,
      'control_not_json',
      `Emulator control ${method} ${path} answered ${response.status} with a body that is not JSON: is ${target.url} the emulator?`,
    );
  }
  if (!response.ok) {
    const hint =
      response.status === 404 ? ' (is the emulator started with control: true, and called over loopback?)' : '';
    throw new EmulatorControlError(
      response.status,
      parsed.errorCode ?? 'control_failed',
      `Emulator control ${method} ${path} answered ${response.status}: ${parsed.message ?? text}${hint}`,
    );
  }
  return parsed as T;
}

/** Control calls for the emulator at `url` (what `startEmulator` returned, or the `hosted-sms-verify-kit emulator` command's). */
export function emulatorControl(url: string, options: EmulatorControlOptions = {}): EmulatorControl {
  const target = { url, base: `${url.replace(/\/+$/, '')}/_control`, timeoutMs: timeoutOf(options) };
  const call = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => controlCall<T>(target, method, path, body);
  const sentMessages = async () => (await call<{ messages: SmsMessage[] }>('GET', '/outbox')).messages;

  return {
    async completeSession(sessionId: string, outcome: 'verified' | 'failed', reason?: FailureReason) {
      await call('POST', `/sessions/${encodeURIComponent(sessionId)}/complete`, { outcome, reason });
    },
    async moveEndedSession(sessionId, outcome, reason) {
      const path = `/sessions/${encodeURIComponent(sessionId)}/complete`;
      await call('POST', path, { outcome, reason, moveEnded: true });
    },
    sessionByHandoff: (handoff) => call<ControlSession>('POST', '/sessions/lookup', { handoff }),
    tamperEcho: (sessionId, echo) =>
      call<ControlSession>('POST', `/sessions/${encodeURIComponent(sessionId)}/echo`, echo),
    async latestCode(query) {
      const message = (await sentMessages()).findLast((candidate) => matches(query, candidate));
      if (message === undefined) {
        const about = 'sessionId' in query ? `session ${query.sessionId}` : `destination ${query.destination}`;
        throw new EmulatorControlError(404, 'no_sms_sent', `The emulator sent no SMS for ${about}.`);
      }
      return message.code;
    },
    sentMessages,
    async advanceClock(seconds) {
      await call('POST', '/clock', { advanceSeconds: seconds });
    },
    async injectFaults(faults) {
      return (await call<{ faults: FaultSettings }>('POST', '/faults', faults)).faults;
    },
    async setRateLimits(limits) {
      return (await call<{ rateLimits: RateLimitSettings }>('POST', '/rate-limits', limits)).rateLimits;
    },
    stats: () => call<Stats>('GET', '/stats'),
    async reset() {
      await call('POST', '/reset', {});
    },
  };
}
