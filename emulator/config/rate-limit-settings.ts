/**
 * The emulator's rate-limit settings and their checks: pure parsing, shared by the configuration,
 * the control API and the limiter (api/rate-limits.ts), which is why it sits below all three.
 */

/** Requests per second per client; 0 means no limit. */
export interface RateLimitSettings {
  /** GET /session/{id} per second per client. Default 0 (off). */
  statusReadsPerSecond: number;
  /** POST /session per second per client (replays included). Default 0 (off). */
  createsPerSecond: number;
}

export const NO_RATE_LIMITS: RateLimitSettings = { statusReadsPerSecond: 0, createsPerSecond: 0 };

const FIELDS = ['statusReadsPerSecond', 'createsPerSecond'] as const;
const MAX_PER_SECOND = 1_000_000;

/** Validates a rate limits update; returns it or a message saying what is wrong. */
export function parseRateLimitUpdate(body: unknown): Partial<RateLimitSettings> | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'Send a JSON object such as {"statusReadsPerSecond": 300, "createsPerSecond": 20} (0 = no limit).';
  }
  const update: Partial<RateLimitSettings> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!(FIELDS as readonly string[]).includes(name)) return `Unknown rate limit "${name}".`;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_PER_SECOND) {
      return `${name} must be a number of requests per second from 0 (no limit) to ${MAX_PER_SECOND}.`;
    }
    update[name as (typeof FIELDS)[number]] = value;
  }
  return update;
}
