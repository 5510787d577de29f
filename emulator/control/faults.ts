/** Injected faults (POST /_control/faults) and call statistics (GET /_control/stats). */

export type ResetPhase = 'before' | 'after';

export interface FaultSettings {
  /** The next N POST /session answer `createStatus` without acting. */
  createFailures: number;
  createStatus: number;
  /** Every POST /session waits this long (while in flight) before acting. */
  createDelayMs: number;
  /** The next N POST /session get their socket destroyed, before acting or after (the lost response). */
  resetConnections: number;
  resetPhase: ResetPhase;
  /** The next N GET /session/{id} answer `statusStatus`. */
  statusFailures: number;
  statusStatus: number;
  /** Every GET /session/{id} waits this long. */
  statusDelayMs: number;
  /** The HTTP status of the four create validation errors (the spec does not state it; default 400; 200 or a 4xx). */
  validationStatus: number;
  /** Create and status read answers carry one more field no client knows (the spec shows no full field list). */
  unknownFields: boolean;
  /** The create answer's name for the field whose value is `form_post` (the spec does not name it). */
  bindingField: string;
  /** What status reads answer in the legacy `assertionExchanged`, a field clients ignore (default false). */
  assertionExchanged: boolean;
  /** The backend API's error bodies carry only `errorCode` (the spec states nothing beyond it). */
  bareErrors: boolean;
}

const NO_FAULTS: FaultSettings = {
  createFailures: 0,
  createStatus: 503,
  createDelayMs: 0,
  resetConnections: 0,
  resetPhase: 'after',
  statusFailures: 0,
  statusStatus: 503,
  statusDelayMs: 0,
  validationStatus: 400,
  unknownFields: false,
  bindingField: 'binding',
  assertionExchanged: false,
  bareErrors: false,
};

const COUNTS = ['createFailures', 'createDelayMs', 'resetConnections', 'statusFailures', 'statusDelayMs'] as const;
const STATUSES = ['createStatus', 'statusStatus'] as const;
const DELAYS: readonly string[] = ['createDelayMs', 'statusDelayMs'];
/** The longest a timer waits: node waits 1 ms for a longer delay. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** A JSON field name the create answer does not already use. */
const BINDING_FIELD = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const CREATE_FIELDS: readonly string[] = ['isSuccess', 'sessionId', 'verifyUrl', 'handoff', 'expiresInSeconds'];

function bindingFieldError(value: unknown): string | undefined {
  if (typeof value === 'string' && BINDING_FIELD.test(value) && !CREATE_FIELDS.includes(value)) return undefined;
  return `bindingField must be a field name (a letter, then letters, digits or _) other than ${CREATE_FIELDS.join(', ')}.`;
}

/** Validates a faults update; returns the update or a message saying what is wrong. */
export function parseFaultUpdate(body: unknown): Partial<FaultSettings> | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Send a JSON object of fault settings.';
  const input = body as Record<string, unknown>;
  const update: Partial<FaultSettings> = {};
  for (const [name, value] of Object.entries(input)) {
    if ((COUNTS as readonly string[]).includes(name)) {
      if (!Number.isInteger(value) || (value as number) < 0) return `${name} must be a non-negative integer.`;
      if (DELAYS.includes(name) && (value as number) > MAX_DELAY_MS) {
        return `${name} must be at most ${MAX_DELAY_MS} (about 24.8 days), the longest a timer waits.`;
      }
      update[name as (typeof COUNTS)[number]] = value as number;
    } else if ((STATUSES as readonly string[]).includes(name)) {
      if (!Number.isInteger(value) || (value as number) < 400 || (value as number) > 599)
        return `${name} must be an HTTP error status (400-599).`;
      update[name as (typeof STATUSES)[number]] = value as number;
    } else if (name === 'validationStatus') {
      // 200 too: the service's successes are told by isSuccess, so its refusals may share their status.
      if (!Number.isInteger(value) || (value !== 200 && ((value as number) < 400 || (value as number) > 499)))
        return 'validationStatus must be 200 (a refusal told by isSuccess false) or a client error status (400-499).';
      update.validationStatus = value as number;
    } else if (name === 'unknownFields' || name === 'assertionExchanged' || name === 'bareErrors') {
      if (typeof value !== 'boolean') return `${name} must be true or false.`;
      update[name] = value;
    } else if (name === 'bindingField') {
      const error = bindingFieldError(value);
      if (error !== undefined) return error;
      update.bindingField = value as string;
    } else if (name === 'resetPhase') {
      if (value !== 'before' && value !== 'after') return 'resetPhase must be "before" or "after".';
      update.resetPhase = value;
    } else {
      return `Unknown fault "${name}".`;
    }
  }
  return update;
}

export class Faults {
  #settings: FaultSettings = { ...NO_FAULTS };

  get settings(): Readonly<FaultSettings> {
    return this.#settings;
  }

  update(update: Partial<FaultSettings>): void {
    this.#settings = { ...this.#settings, ...update };
  }

  reset(): void {
    this.#settings = { ...NO_FAULTS };
  }

  /** Consumes one create failure; returns the status to answer with, if any. */
  takeCreateFailure(): number | undefined {
    if (this.#settings.createFailures === 0) return undefined;
    this.#settings.createFailures -= 1;
    return this.#settings.createStatus;
  }

  /** Consumes one connection reset if one is due in this phase. */
  takeCreateReset(phase: ResetPhase): boolean {
    if (this.#settings.resetConnections === 0 || this.#settings.resetPhase !== phase) return false;
    this.#settings.resetConnections -= 1;
    return true;
  }

  takeStatusFailure(): number | undefined {
    if (this.#settings.statusFailures === 0) return undefined;
    this.#settings.statusFailures -= 1;
    return this.#settings.statusStatus;
  }
}

export interface Stats {
  /** Sessions created (each sends one SMS: at create, or for a passkey user only when asked). */
  creates: number;
  /** POST /session answered by replaying a stored response. */
  replays: number;
  smsSent: number;
  /** SMS sent per Idempotency-Key text, every client's uses of it added up (creates without a key are not listed). */
  smsByIdempotencyKey: Record<string, number>;
  /** SMS sent per client and its Idempotency-Key: keys are the client's own, as the service scopes them. */
  smsByClientIdempotencyKey: Record<string, Record<string, number>>;
  /** Authenticated GET /session/{id} calls, including failed, delayed and rate-limited ones. */
  statusReads: number;
  /** GET /session/{id} answered 429 (beyond `statusReadsPerSecond`). */
  statusReadsLimited: number;
  /** POST /session answered 429 (beyond `createsPerSecond`); not counted in `creates`. */
  createsLimited: number;
  /** POST requests to verifyUrl, accepted or refused. */
  verifyPosts: number;
  /** What the texts sent cost, by the price table (`smsPrices`), rounded to a millionth. */
  smsCost: number;
  /** Texts sent and their cost per destination country (ISO code; 'ZZ' when no country's ranges hold the number). */
  smsByCountry: Record<string, { sent: number; cost: number }>;
}

export function emptyStats(): Stats {
  return {
    creates: 0,
    replays: 0,
    smsSent: 0,
    smsByIdempotencyKey: Object.create(null) as Record<string, number>,
    smsByClientIdempotencyKey: Object.create(null) as Record<string, Record<string, number>>,
    statusReads: 0,
    statusReadsLimited: 0,
    createsLimited: 0,
    verifyPosts: 0,
    smsCost: 0,
    smsByCountry: Object.create(null) as Record<string, { sent: number; cost: number }>,
  };
}
