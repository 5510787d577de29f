/**
 * Status reads cost the integrator, and arrival proves nothing, so a flood of landings (or reloads)
 * of one session must not become a flood of reads at the service. Within one instance, reads of a
 * session coalesce: while one is in flight every caller shares it (single-flight), and a `pending`
 * answer is reused for `pendingReuseMs`. A final answer (verified, failed) is never reused: each
 * caller still runs the one fulfil path on it, which the store settles once.
 */
import type { SessionStatus, VerifyClient } from '../types.ts';

/**
 * How long a `pending` answer is reused by default: under the landing's default re-check interval
 * (600 ms), so one landing still reads each time, while a flood costs about two reads a second.
 */
export const PENDING_REUSE_MS = 500;

/** The client with getSession coalesced per session id; createSession and close pass through. */
export function coalesceStatusReads(client: VerifyClient, pendingReuseMs = PENDING_REUSE_MS): VerifyClient {
  const inFlight = new Map<string, Promise<SessionStatus>>();
  const pending = new Map<string, { until: number; status: SessionStatus }>();

  const forget = (now: number) => {
    for (const [sessionId, reuse] of pending) if (reuse.until <= now) pending.delete(sessionId);
  };

  const read = (sessionId: string): Promise<SessionStatus> => {
    const shared = inFlight.get(sessionId);
    if (shared !== undefined) return shared;
    const reading = client.getSession(sessionId).then(
      (status) => {
        inFlight.delete(sessionId);
        // `?.`: a ready client (the app's code) may answer anything; readStatus refuses it.
        if (status?.status === 'pending' && pendingReuseMs > 0)
          pending.set(sessionId, { until: performance.now() + pendingReuseMs, status });
        else pending.delete(sessionId);
        return status;
      },
      (error: unknown) => {
        inFlight.delete(sessionId);
        throw error;
      },
    );
    inFlight.set(sessionId, reading);
    return reading;
  };

  return {
    createSession: (input, idempotencyKey) => client.createSession(input, idempotencyKey),
    close: () => client.close(),
    getSession(sessionId) {
      const now = performance.now();
      const reuse = pending.get(sessionId);
      if (reuse !== undefined && reuse.until > now) return Promise.resolve(reuse.status);
      // Expired entries go now and then, so the map stays small.
      if (pending.size > 1000) forget(now);
      return read(sessionId);
    },
  };
}
