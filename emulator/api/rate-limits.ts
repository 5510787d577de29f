/**
 * Per-client rate limits of the backend API (off by default): status reads and creates per second.
 * The spec says limits exist but does not show them; this stand-in answers 429 with `Retry-After`
 * (whole seconds) beyond a limit, so integrators can test how their code slows down.
 */
import type { NextFunction, Request, Response } from 'express';
import { clientOf } from './auth.ts';
import { sendError } from '../errors.ts';
import { NO_RATE_LIMITS, type RateLimitSettings } from '../config/rate-limit-settings.ts';

export type RateLimitedCall = 'status' | 'create';

/**
 * A token bucket per client and call: `perSecond` tokens a second, at most one second's worth
 * (and at least one call) saved up, so a burst never exceeds the limit over any second by more
 * than the limit itself.
 * Real time, not the virtual clock: a rate is about how fast the caller calls.
 */
const capacity = (perSecond: number) => Math.max(1, perSecond);

class Bucket {
  tokens: number;
  at: number;

  constructor(perSecond: number, now: number) {
    this.tokens = capacity(perSecond);
    this.at = now;
  }

  /** Takes one token, or says in how many ms the next one comes. */
  take(perSecond: number, now: number): number {
    this.tokens = Math.min(capacity(perSecond), this.tokens + ((now - this.at) / 1000) * perSecond);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return ((1 - this.tokens) / perSecond) * 1000;
  }
}

export class RateLimits {
  #settings: RateLimitSettings;
  readonly #initial: RateLimitSettings;
  readonly #buckets = new Map<string, Bucket>();

  constructor(initial: RateLimitSettings = NO_RATE_LIMITS) {
    this.#initial = { ...initial };
    this.#settings = { ...initial };
  }

  get settings(): Readonly<RateLimitSettings> {
    return this.#settings;
  }

  update(update: Partial<RateLimitSettings>): void {
    this.#settings = { ...this.#settings, ...update };
    this.#buckets.clear();
  }

  /** Back to the limits the emulator was started with. */
  reset(): void {
    this.update(this.#initial);
  }

  /** 0 when the call may go ahead, else the ms until it may. */
  wait(clientId: string, call: RateLimitedCall, now = Date.now()): number {
    const perSecond = call === 'status' ? this.#settings.statusReadsPerSecond : this.#settings.createsPerSecond;
    if (perSecond <= 0) return 0;
    const key = `${call}\u0000${clientId}`;
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      bucket = new Bucket(perSecond, now);
      this.#buckets.set(key, bucket);
    }
    return bucket.take(perSecond, now);
  }
}

/** Middleware after auth: a call beyond its client's limit is answered 429 with Retry-After and not served. */
export function rateLimited(limits: RateLimits, call: RateLimitedCall, onRefused: () => void) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const waitMs = limits.wait(clientOf(res).clientId, call);
    if (waitMs === 0) {
      next();
      return;
    }
    onRefused();
    res.set('Retry-After', String(Math.max(1, Math.ceil(waitMs / 1000))));
    sendError(res, 429, 'rate_limited', 'Too many requests for this client; retry after the Retry-After delay.');
  };
}
