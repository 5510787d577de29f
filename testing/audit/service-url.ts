/** Whether two URLs name one service: the app's kit and the emulator the audit was given. */

/** `localhost` and 127.0.0.1 are one host to a loopback emulator. */
function serviceKey(url: string): string {
  const parsed = new URL(url);
  const host = parsed.hostname === 'localhost' ? '127.0.0.1' : parsed.hostname;
  return `${parsed.protocol}//${host}:${parsed.port}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** True when both URLs name the same service (scheme, host, port and path; a trailing slash aside). */
export function sameService(a: string, b: string): boolean {
  try {
    return serviceKey(a) === serviceKey(b);
  } catch {
    return false;
  }
}
