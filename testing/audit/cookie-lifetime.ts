/**
 * Whether a Set-Cookie line has the browser drop its cookie at once (RFC 6265 §5.3): a Max-Age
 * wins over an Expires, and one of 0 or less deletes; else an Expires already past does. The
 * audit's cookie jar and its cookie checks read a line by it, as a browser does.
 */

/** The value of the last attribute named `name` (case aside) of a Set-Cookie line, if any. */
export function lastAttribute(attributes: string[], name: string): string | undefined {
  let value: string | undefined;
  for (const attribute of attributes) {
    const eq = attribute.indexOf('=');
    if (eq > 0 && attribute.slice(0, eq).trim().toLowerCase() === name) value = attribute.slice(eq + 1).trim();
  }
  return value;
}

/** Whether the Set-Cookie `line` deletes its cookie: Max-Age 0 or less, or else an Expires past. */
export function cookieLineDeletes(line: string, now = Date.now()): boolean {
  const attributes = line.split(';').slice(1);
  // A Max-Age not written as a whole number is ignored by the browser, as if absent.
  const maxAge = lastAttribute(attributes, 'max-age');
  if (maxAge !== undefined && /^-?\d+$/.test(maxAge)) return Number(maxAge) <= 0;
  const expires = lastAttribute(attributes, 'expires');
  const at = expires === undefined ? Number.NaN : Date.parse(expires);
  return !Number.isNaN(at) && at <= now;
}

/** The names of a Set-Cookie line's attributes, trimmed and in lower case (`Secure`, `HttpOnly`, `SameSite = Lax`). */
export function attributeNames(line: string): string[] {
  return line
    .split(';')
    .slice(1)
    .map((attribute) => {
      const eq = attribute.indexOf('=');
      return (eq === -1 ? attribute : attribute.slice(0, eq)).trim().toLowerCase();
    });
}
