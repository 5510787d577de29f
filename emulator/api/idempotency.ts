/**
 * Idempotency-Key handling for POST /session, after the IETF draft as the spec states it:
 * per-client keys kept 24 h, only successes stored, replay on same payload, 409 while the first
 * request runs, 422 for another payload.
 */
import { createHash } from 'node:crypto';
import type { TestClock } from '../clock.ts';
import { RETENTION_MS } from './sessions.ts';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * A key's text. Node hands a header over byte by byte (one latin1 character per byte), so a key
 * sent as UTF-8 is decoded: "é" is one character, not two. One that is not UTF-8 stays as its bytes.
 */
export function idempotencyKeyText(key: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(key, 'latin1'));
  } catch {
    return key;
  }
}

/** A key's length in characters of its text, as the limit counts it. */
export function idempotencyKeyLength(key: string): number {
  return [...idempotencyKeyText(key)].length;
}

type Entry =
  | { phase: 'in_flight'; fingerprint: string }
  | { phase: 'stored'; fingerprint: string; storedAt: number; body: object };

export type Claim =
  /** A fresh attempt: call `store` on success or `release` on failure (so it can be retried). */
  | { kind: 'new'; store(body: object): void; release(): void }
  | { kind: 'replay'; body: object }
  | { kind: 'in_flight' }
  | { kind: 'key_reused' }
  /** The payload nests too deeply to be fingerprinted: refused, nothing claimed. */
  | { kind: 'too_deep' };

/** Deeper than any create request nests: a body past it is refused before it is fingerprinted. */
export const MAX_PAYLOAD_DEPTH = 32;

/**
 * JSON with object keys sorted at every level, so key order does not change a payload's identity;
 * undefined when the payload nests deeper than MAX_PAYLOAD_DEPTH (the recursion would exhaust the stack).
 */
export function canonicalJson(value: unknown, depth = 0): string | undefined {
  if (depth > MAX_PAYLOAD_DEPTH) return undefined;
  const inner = (item: unknown) => canonicalJson(item, depth + 1);
  if (Array.isArray(value)) {
    const items = value.map(inner);
    return items.includes(undefined) ? undefined : `[${items.join(',')}]`;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const items = entries.map(([key, item]) => {
      const text = inner(item);
      return text === undefined ? undefined : `${JSON.stringify(key)}:${text}`;
    });
    return items.includes(undefined) ? undefined : `{${items.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: TestClock;

  constructor(clock: TestClock) {
    this.#clock = clock;
  }

  claim(clientId: string, key: string, payload: unknown): Claim {
    // Scoped per client: another client's identical key is a different key.
    const scopedKey = `${clientId}\u0000${key}`;
    const canonical = canonicalJson(payload);
    if (canonical === undefined) return { kind: 'too_deep' };
    const fingerprint = createHash('sha256').update(canonical).digest('hex');
    this.#forgetExpired();
    const existing = this.#current(scopedKey);
    if (existing?.phase === 'in_flight') return { kind: 'in_flight' };
    if (existing?.phase === 'stored') {
      return existing.fingerprint === fingerprint ? { kind: 'replay', body: existing.body } : { kind: 'key_reused' };
    }
    this.#entries.set(scopedKey, { phase: 'in_flight', fingerprint });
    return {
      kind: 'new',
      store: (body) =>
        this.#entries.set(scopedKey, { phase: 'stored', fingerprint, storedAt: this.#clock.now(), body }),
      release: () => {
        if (this.#entries.get(scopedKey)?.phase === 'in_flight') this.#entries.delete(scopedKey);
      },
    };
  }

  /** Keys held, expired ones not yet forgotten included. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Forgets stored keys past 24 h from the oldest on (the map keeps the order keys were first
   * claimed; one in flight is passed over), so a long-running emulator holds about a day of keys.
   */
  #forgetExpired(): void {
    const now = this.#clock.now();
    for (const [scopedKey, entry] of this.#entries) {
      if (entry.phase === 'in_flight') continue;
      if (now - entry.storedAt <= RETENTION_MS) return;
      this.#entries.delete(scopedKey);
    }
  }

  #current(scopedKey: string): Entry | undefined {
    const entry = this.#entries.get(scopedKey);
    if (entry?.phase === 'stored' && this.#clock.now() - entry.storedAt > RETENTION_MS) {
      this.#entries.delete(scopedKey);
      return undefined;
    }
    return entry;
  }

  clear(): void {
    this.#entries.clear();
  }
}
