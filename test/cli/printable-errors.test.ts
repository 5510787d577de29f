/**
 * What a command prints of an error shows no URL's password, however the password is written: a
 * generated one holds "/", "+", "=" and sometimes "?", "#" or "@", and pasted into a database URL
 * without percent-encoding it is still the password an error quoting the URL shows.
 */
import { describe, expect, it } from 'vitest';
import { withoutUrlPasswords } from '../../middleware/printable-errors.ts';

describe('withoutUrlPasswords', () => {
  it.each([
    ['postgres://app:s3cret@db.internal:5432/app', 'postgres://app:[redacted]@db.internal:5432/app'],
    ['postgres://app:Zm9v/YmFy+cXV4=@db:5432/app', 'postgres://app:[redacted]@db:5432/app'],
    ['postgres://app:a?b#c@db/app', 'postgres://app:[redacted]@db/app'],
    ['postgres://app:p@ss:w/rd@db/app', 'postgres://app:[redacted]@db/app'],
    ['mysql://:only/pw@h/d', 'mysql://:[redacted]@h/d'],
    ['postgres://app:/pw@db/app', 'postgres://app:[redacted]@db/app'],
  ])('%s loses its password', (url, shown) => {
    const password = url.slice(url.indexOf(':', url.indexOf('//')) + 1, url.lastIndexOf('@'));
    const text = withoutUrlPasswords(`could not connect to ${url} (ECONNREFUSED)`);
    expect(text).toBe(`could not connect to ${shown} (ECONNREFUSED)`);
    expect(text).not.toContain(password);
  });

  it.each([
    'https://verify.example.com/session/ses_1',
    'http://localhost:3000/verify/return?next=a@b.example',
    'postgres://app@db/app',
    'see http://127.0.0.1:4010/_dev/inbox and mail ops@example.com',
  ])('%s, without a password, is left as it is', (text) => {
    expect(withoutUrlPasswords(text)).toBe(text);
  });

  it('in a JSON line, only the URL’s own password: the next field, with an "@" of its own, is left as it is', () => {
    const line = JSON.stringify({ error: 'connect postgres://app:a/b@db/app', contact: 'ops@example.com' });
    const shown = withoutUrlPasswords(line);
    expect(JSON.parse(shown)).toEqual({
      error: 'connect postgres://app:[redacted]@db/app',
      contact: 'ops@example.com',
    });
  });
});
