/**
 * A challenge whose verify throws a rejected promise (a helper that `throw`s the provider's call)
 * counts as not passed, and the promise it threw is handled: no unhandled rejection, which would
 * end a production process (Node's default --unhandled-rejections=throw).
 */
import type { Request } from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../middleware/logger.ts';
import { pumpingGuard, type PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { resolvePumping } from '../../middleware/pumping/pumping-options.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

const NOW = Date.UTC(2026, 0, 5, 10, 10);
const store = createSqliteStore({ database: ':memory:' });
let guard: PumpingGuard;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
  const { resolved } = resolvePumping({
    mode: 'refuse',
    thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
    challenge: {
      verify: () => {
        // The provider's call, thrown rather than returned.
        throw Promise.reject(new Error('siteverify unreachable'));
      },
    },
  });
  guard = pumpingGuard({
    pumping: resolved,
    store: store.pumping,
    logger: silentLogger,
    now: () => NOW,
    challengeTimeoutMs: 1_000,
    ipv6Subnet: 64,
    releaseTimeoutMs: 5_000,
  });
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  return store.close();
});

it('a challenge that throws a rejected promise: not passed, and no unhandled rejection', async () => {
  const req = { ip: '192.0.2.10', socket: {}, body: {} } as unknown as Request;
  const start = (phone: string) => guard(req, { userRef: `someone-${phone}`, destination: phone });
  // Four Kenyan texts never verified trip the country's hourly rule: the fifth is challenged.
  for (let n = 0; n < 4; n++) await start(`+2547${10 + n}000001`);
  const outcome = await start('+254720000001').then(
    () => 'sent',
    (error: { code?: string }) => error.code,
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(outcome).toBe('rate_limited');
  expect(unhandled.map((reason) => String(reason))).toEqual([]);
});
