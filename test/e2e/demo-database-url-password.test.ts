/**
 * The demo logs its configuration ("demo started") and prints its database in the banner, with the
 * password of DATABASE_URL hidden. PostgreSQL also takes the password (and a client key's
 * passphrase) as query parameters (`?password=…`, `?sslpassword=…`): hidden too.
 */
import { expect, it } from 'vitest';
import { describeConfig, loadConfig } from '../../demo-app/config.ts';
import { withoutPassword } from '../../demo-app/data.ts';

const PASSWORD = 'db-pass-Qm3Zt8Lw2Rx9';

it.each([
  [`postgres://app:${PASSWORD}@db.internal:5432/app`],
  [`postgres://app@db.internal:5432/app?password=${PASSWORD}`],
  [`postgres://app@db.internal:5432/app?sslmode=require&sslpassword=${PASSWORD}`],
  [`postgresql://app@db.internal/app?password=${PASSWORD}&application_name=demo`],
])('%s: shown without its password', (url) => {
  const shown = withoutPassword(url);
  expect(shown).not.toContain(PASSWORD);
  expect(shown).toContain('db.internal');
  const logged = JSON.stringify(describeConfig(loadConfig({ DATABASE_URL: url })));
  expect(logged).not.toContain(PASSWORD);
  expect(logged).toContain('db.internal');
});

it('keeps what is no secret: the other parameters', () => {
  expect(withoutPassword('postgres://app@db.internal/app?sslmode=require&application_name=demo')).toBe(
    'postgres://app@db.internal/app?sslmode=require&application_name=demo',
  );
});
