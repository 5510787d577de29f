/** Where a session's verifyUrl may send the handoff: its origin, checked as baseUrl is (https, or http on loopback). */
import { KitError, KitErrorCode } from '../errors.ts';
import { isLoopbackHostname } from '../options/service-access.ts';

function verifyUrlOrigin(verifyUrl: string): string {
  let url: URL;
  try {
    url = new URL(verifyUrl);
  } catch {
    throw new KitError(KitErrorCode.ServiceProtocolError, 'The verification service returned an unusable verifyUrl.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'The verification service returned a verifyUrl that is not http(s).',
    );
  }
  // Shown in the page's form and posted to: a userinfo would be shown, sent, or hide the real host.
  if (url.username !== '' || url.password !== '') {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'The verification service returned a verifyUrl carrying credentials; it is not used.',
    );
  }
  // The same rule as baseUrl: the handoff is posted there, so never in clear across a network.
  if (url.protocol === 'http:' && !isLoopbackHostname(url.hostname)) {
    throw new KitError(
      KitErrorCode.ServiceProtocolError,
      'The verification service returned a plain-http verifyUrl outside loopback; it must use https.',
    );
  }
  return url.origin;
}

/**
 * verifyUrlOrigin, remembering the last origin: the service's verifyUrls share it, and a URL that
 * starts with "<origin>/" has exactly that origin (the first "/" after the host ends the authority),
 * so most starts skip the URL parse.
 */
export function originOfVerifyUrl(): (verifyUrl: string) => string {
  let last: string | undefined;
  return (verifyUrl) => {
    if (last !== undefined && verifyUrl.startsWith(`${last}/`)) return last;
    last = verifyUrlOrigin(verifyUrl);
    return last;
  };
}
