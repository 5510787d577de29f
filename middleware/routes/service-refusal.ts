/**
 * What to change when the service refuses the kit's own calls: a wrong secret, an unregistered
 * returnUrl, a baseUrl that names an endpoint. These are set-up mistakes the integrator fixes
 * once, so the log line says how. The secret's value is never quoted.
 */
import type { KitContext } from '../context.ts';
import { KitErrorCode, type KitError } from '../errors.ts';

const FROM_SERVICE: ReadonlySet<string> = new Set([KitErrorCode.ServiceRejected, KitErrorCode.ServiceProtocolError]);

/** The create's refusals the interface names, whatever status they come with. */
const STATED_CREATE_CODES: ReadonlySet<string> = new Set([
  'invalid_return_url',
  'invalid_channel',
  'destination_required',
  'invalid_operation_sensitivity',
  'idempotency_request_in_flight',
  'idempotency_key_reused',
]);

function returnUrlFix(returnUrl: string): string {
  return (
    `Fix: returnUrl "${returnUrl}" is not registered for this client. Register exactly ` +
    'this URL in the portal (scheme, host, port, path and trailing slash all count), or set returnUrl to the registered one.'
  );
}

/** The fix for a refusal caused by the kit's set-up, or undefined for anything else. */
export function serviceRefusalFix(
  context: Pick<KitContext, 'baseUrl' | 'returnUrl'>,
  error: KitError,
): string | undefined {
  if (!FROM_SERVICE.has(error.code)) return undefined;
  if (error.serviceErrorCode === 'invalid_return_url') return returnUrlFix(context.returnUrl);
  // The interface states no status for its create errors: a code it names is told by its code alone.
  if (STATED_CREATE_CODES.has(error.serviceErrorCode ?? '')) return undefined;
  if (error.serviceStatus === 401 || error.serviceErrorCode === 'unauthorized') {
    return (
      // Neither value is quoted: read the wrong way round, clientId holds the secret.
      'Fix: the service refused the client credentials. Check that clientId and clientSecret are the pair the portal ' +
      'issued for this app, not swapped (read the secret from the environment; it is never logged).'
    );
  }
  if (error.serviceStatus === 404) {
    const base = context.baseUrl.replace(/\/+$/, '');
    const suggested = base.replace(/\/session$/, '');
    const hint = suggested === base ? '' : ` Use "${suggested}".`;
    return (
      `Fix: the service answered 404 at ${base}/session. baseUrl must be the service's base address ` +
      `(the kit adds /session itself), not an endpoint.${hint}`
    );
  }
  return undefined;
}
