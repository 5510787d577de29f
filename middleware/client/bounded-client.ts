/**
 * A client the app passes ready-made (`client: yourClient`) is its code, outside the kit's trust
 * for liveness: its calls run under `hookTimeouts.client`, and one that does not settle in time
 * counts as the service being unreachable, so a start or a landing gets its error page instead of
 * hanging. The kit's own client has connect, headers and body timeouts and is used as it is.
 */
import { withDeadline } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import type { VerifyClient } from '../types.ts';
import { checkedCreatedSession } from './client.ts';

export function boundedClient(client: VerifyClient, ms: number): VerifyClient {
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
        () => client.createSession(input, idempotencyKey),
        late('createSession'),
      );
      const body = typeof created === 'object' && created !== null ? (created as Record<string, unknown>) : {};
      return checkedCreatedSession(body, body.replayed === true);
    },
    getSession: (sessionId) => withDeadline('client', ms, () => client.getSession(sessionId), late('getSession')),
    close: () => client.close(),
  };
}
