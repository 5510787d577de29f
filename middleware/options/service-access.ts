/**
 * The service's address and credentials, one rule for the kit's options and createVerifyClient's:
 * every call carries the client secret in its Authorization header, so it goes over https, or
 * plain http only to an emulator on loopback. Messages quote the URL without its credentials,
 * query or fragment, and never the secret.
 */
import { carriesSecret, MIN_SECRET_LENGTH } from '../errors.ts';
import { BASE_URL_CARRIES_SECRET, CONTROL, quote, type OptionProblems } from './option-problems.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A URL hostname plain http may use: the loopback names (`localhost`, `*.localhost`, which
 * browsers resolve to loopback themselves, `127.0.0.1`, `[::1]`). Anywhere else it must be https.
 */
export function isLoopbackHostname(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || hostname.endsWith('.localhost');
}

export function checkBaseUrl(problems: OptionProblems, value: unknown, clientSecret: unknown): void {
  if (typeof value !== 'string' || value === '') {
    problems.add('`baseUrl` must be the service\'s base address, e.g. "https://verify.example.com".');
    return;
  }
  if (carriesSecret(value, clientSecret)) {
    problems.add(BASE_URL_CARRIES_SECRET);
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not quoted: what does not parse cannot be stripped of credentials it may carry.
    problems.add(
      '`baseUrl` must be an absolute URL such as "https://verify.example.com": the value given does not parse as a URL ' +
        '(it is not shown, as it may carry credentials; credentials go in `clientId` and `clientSecret`).',
    );
    return;
  }
  // Its query and fragment are never quoted: they may carry a credential in any spelling.
  const shown = quote(`${url.protocol}//${url.host}${url.pathname}`);
  if (url.username !== '' || url.password !== '') {
    problems.add(
      '`baseUrl` must not carry credentials: pass them as `clientId` and `clientSecret` (sent only in the Authorization header).',
    );
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHostname(url.hostname))) {
    problems.add(`\`baseUrl\` must use https (http is allowed only for a loopback emulator): got ${shown}.`);
  }
  if (url.search !== '' || url.hash !== '') {
    problems.add(`\`baseUrl\` must have no query or fragment (not shown): did you mean ${shown}?`);
  }
}

export function checkCredentials(problems: OptionProblems, clientId: unknown, clientSecret: unknown): void {
  if (typeof clientId !== 'string' || clientId === '') {
    problems.add(
      `\`clientId\` must be the client id issued by the portal, a non-empty string: got ${quote(clientId)}.`,
    );
  } else if (clientId.includes(':')) {
    // Most likely the Basic pair "id:secret" pasted whole: what follows the colon is the secret.
    problems.add(
      '`clientId` must be the client id issued by the portal, without ":" (not shown: an "id:secret" pair pasted whole?). Pass the id as `clientId` and the secret as `clientSecret`.',
    );
  } else if (CONTROL.test(clientId)) {
    problems.add('`clientId` contains control characters (not shown; a trailing newline from a file?): trim it.');
  }
  if (typeof clientSecret !== 'string' || clientSecret === '') {
    problems.add(
      "`clientSecret` must be the secret issued by the portal, read from the server's environment (e.g. process.env.VERIFY_CLIENT_SECRET); it is missing or not a string.",
    );
  } else if (CONTROL.test(clientSecret) || clientSecret.trim() !== clientSecret) {
    problems.add(
      '`clientSecret` contains whitespace or control characters (a trailing newline from a file?); trim it.',
    );
  } else if (clientSecret.length < MIN_SECRET_LENGTH) {
    // Too short for its base64 to be recognised at every offset (a Basic header), so no message could be kept free of it.
    problems.add(
      `\`clientSecret\` is shorter than ${MIN_SECRET_LENGTH} characters, so it is not a secret the portal issued (a placeholder?): pass the issued secret.`,
    );
  }
}
