/**
 * A 429's Retry-After, as the client waits it: delta-seconds or an HTTP date (RFC 9110). Anything
 * else names nothing usable and waits the default second; it must never read as a date long past
 * (no wait at all), which would send the retries at a service that asked for a pause.
 */
import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../middleware/client/client-transport.ts';

const NOW = Date.parse('2026-12-01T08:00:00Z');

describe('Retry-After', () => {
  it('reads delta-seconds and the HTTP date formats', () => {
    expect(retryAfterMs('120', NOW)).toBe(120_000);
    expect(retryAfterMs('Tue, 01 Dec 2026 08:00:30 GMT', NOW)).toBe(30_000);
    expect(retryAfterMs('Tuesday, 01-Dec-26 08:00:30 GMT', NOW)).toBe(30_000);
    expect(retryAfterMs('Tue Dec  1 08:00:30 2026', NOW)).toBe(30_000);
    // A date already past: no wait.
    expect(retryAfterMs('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(0);
  });

  it('reads an asctime date as GMT, whatever the local zone', () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      expect(retryAfterMs('Tue Dec  1 08:00:30 2026', NOW)).toBe(30_000);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('waits the default second for a value that is neither, though a lenient date parser reads it as a past date', () => {
    for (const garbage of ['-5', '1.5', 'soon 1', '5 s', 'abc', '']) {
      expect(retryAfterMs(garbage, NOW), JSON.stringify(garbage)).toBe(1000);
    }
    expect(retryAfterMs(undefined, NOW)).toBe(1000);
  });
});
