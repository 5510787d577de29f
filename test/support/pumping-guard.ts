/**
 * The SMS pumping check as a start runs it, on a store of the test's, at a fixed time: the guard
 * from `pumping` options (checked: a test never runs on options the kit refuses), and a start's
 * answer as a word ('sent', or the refusal's code).
 */
import type { Request } from 'express';
import { expect } from 'vitest';
import type { PumpingOptions } from '../../middleware/index.ts';
import { silentLogger } from '../../middleware/logger.ts';
import { pumpingGuard, type PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { resolvePumping } from '../../middleware/pumping/pumping-options.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';

export function testGuard(store: PumpingStore | undefined, options: PumpingOptions, now: number): PumpingGuard {
  const { resolved, problems } = resolvePumping(options);
  expect(problems).toEqual([]);
  return pumpingGuard({
    pumping: resolved,
    store,
    logger: silentLogger,
    now: () => now,
    challengeTimeoutMs: 5_000,
    ipv6Subnet: 64,
    releaseTimeoutMs: 5_000,
  });
}

/** A start's request as the guard reads it: its client address. */
export const requestFrom = (ip: string) => ({ ip, socket: {}, body: {} }) as unknown as Request;

/** A start's answer: 'sent', or its refusal's code ('rate_limited'). */
export function startAnswer(guard: PumpingGuard, req: Request, destination: string, userRef: string): Promise<string> {
  return guard(req, { userRef, destination }).then(
    () => 'sent',
    (error: { code?: string }) => error.code ?? 'error',
  );
}
