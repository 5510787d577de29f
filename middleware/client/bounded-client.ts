/**
 * A client the app passes ready-made (`client: yourClient`) is its code, outside the kit's trust
 * for liveness: its calls run under `hookTimeouts.client`, and one that does not settle in time
 * counts as the service being unreachable, so a start or a landing gets its error page instead of
 * hanging. The kit's own client has connect, headers and body timeouts and is used as it is. A
 * KitError a ready client throws is in the app's words (it may name the number): logged masked.
 */
import { withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { isKitError, KitError, KitErrorCode } from '../errors.ts';
import { markingErrors, thrownByIntegratorCode } from '../logger.ts';
import type { VerifyClient } from '../types.ts';
import { checkedCreatedSession } from './client.ts';
import { boundedRetryAfterMs } from './client-transport.ts';

/**
 * A 429 the ready client reports (`service_busy`) waits as one of the service's would: its
 * `retryAfterSeconds`, when it names one, from 1 s to an hour (1 s for NaN or Infinity).
 */
function asServiceBusy(error: unknown): unknown {
  if (!isKitError(error, KitErrorCode.ServiceBusy) || error.retryAfterSeconds === undefined) return error;
  const retryAfterSeconds = Math.max(1, Math.ceil(boundedRetryAfterMs(Number(error.retryAfterSeconds) * 1000) / 1000));
  if (retryAfterSeconds === error.retryAfterSeconds) return error;
  const { serviceStatus, serviceErrorCode } = error;
  // The ready client's error, copied: in its words as the one it threw.
  return thrownByIntegratorCode(
    new KitError(KitErrorCode.ServiceBusy, error.message, { serviceStatus, serviceErrorCode, retryAfterSeconds }),
  );
}

export function boundedClient(client: VerifyClient, ms: number, onLateRejection?: LateRejectionReporter): VerifyClient {
  const late = (call: string) => () =>
    new KitError(
      KitErrorCode.ServiceUnavailable,
      `The verification client's ${call} did not answer within ${ms} ms (raise hookTimeouts.client if it needs longer).`,
    );
  return {
    // Its answer is checked as the service's: no session id, handoff or usable address is no session.
    createSession: async (input, idempotencyKey) => {
      const created: unknown = await withDeadline(
        'client',
        ms,
        () => markingErrors(() => client.createSession(input, idempotencyKey)),
        {
          late: late('createSession'),
          onLateRejection,
        },
      ).catch((error: unknown) => {
        throw asServiceBusy(error);
      });
      const body = typeof created === 'object' && created !== null ? (created as Record<string, unknown>) : {};
      return checkedCreatedSession(body, body.replayed === true);
    },
    getSession: (sessionId) =>
      withDeadline('client', ms, () => markingErrors(() => client.getSession(sessionId)), {
        late: late('getSession'),
        onLateRejection,
      }).catch((error: unknown) => {
        throw asServiceBusy(error);
      }),
    close: () => client.close(),
  };
}
