/** Everything the emulator's routers share: state, clock, registered clients and its own origin. */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { VirtualClock, type TestClock } from './clock.ts';
import type { EmulatorClient } from './config/config.ts';
import { Faults, emptyStats, type Stats } from './control/faults.ts';
import { IdempotencyStore } from './api/idempotency.ts';
import { Outbox } from './sms/outbox.ts';
import { PasskeyStore, type RelyingParty } from './passkeys/passkeys.ts';
import { RateLimits } from './api/rate-limits.ts';
import type { RateLimitSettings } from './config/rate-limit-settings.ts';
import { SessionStore } from './api/sessions.ts';
import { DEFAULT_SMS_PRICES, type SmsPrices } from './config/sms-prices.ts';

export interface EmulatorContext {
  readonly clients: readonly EmulatorClient[];
  readonly clock: TestClock;
  readonly sessions: SessionStore;
  readonly idempotency: IdempotencyStore;
  readonly outbox: Outbox;
  readonly faults: Faults;
  /** Per-client requests per second (off unless set). */
  readonly rateLimits: RateLimits;
  stats: Stats;
  /** What a text costs per destination country (`stats.smsCost`). */
  readonly smsPrices: SmsPrices;
  /** Signs the hosted page's binding field; fresh per process. */
  readonly bindingKey: Buffer;
  /** The API's origin; known once the server listens (port 0 picks it then). */
  origin: string;
  /** The hosted page's origin, used in verifyUrl: the API's, or another host name on the same port. */
  pageOrigin: string;
  /** Passkeys' relying party (the page's host name); undefined on an IP host, where WebAuthn cannot work. */
  relyingParty: RelyingParty | undefined;
  readonly passkeys: PasskeyStore;
  /** Aborted on close, so injected delays stop waiting. */
  readonly shutdown: AbortSignal;
}

export function createContext(
  clients: readonly EmulatorClient[],
  log: (line: string) => void,
  shutdown: AbortSignal,
  rateLimits: RateLimitSettings | undefined,
  clock: TestClock = new VirtualClock(),
  smsPrices: SmsPrices = DEFAULT_SMS_PRICES,
): EmulatorContext {
  return {
    clients,
    clock,
    sessions: new SessionStore(clock),
    idempotency: new IdempotencyStore(clock),
    outbox: new Outbox(clock, log),
    faults: new Faults(),
    rateLimits: new RateLimits(rateLimits),
    stats: emptyStats(),
    smsPrices,
    bindingKey: randomBytes(32),
    origin: '',
    pageOrigin: '',
    relyingParty: undefined,
    passkeys: new PasskeyStore(),
    shutdown,
  };
}

/** Back to a fresh start (POST /_control/reset); clients, keys and the rate limits started with stay. */
export function resetContext(context: EmulatorContext): void {
  context.sessions.clear();
  context.idempotency.clear();
  context.outbox.clear();
  context.passkeys.clear();
  context.faults.reset();
  context.rateLimits.reset();
  context.clock.reset();
  context.stats = emptyStats();
}

/** Waits out an injected delay; false when the emulator closed meanwhile (then there is no one to answer). */
export async function pause(context: EmulatorContext, ms: number): Promise<boolean> {
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal: context.shutdown });
    return true;
  } catch {
    return false;
  }
}
