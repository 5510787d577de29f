/**
 * What the audit reports (`AuditWorld.scrub`) never shows a URL's password, whatever it holds. A
 * password with a run of seven digits or more, which the report masks as a number, is redacted
 * whole too: masked first, the URL no longer read as one and the rest of the password showed.
 */
import { describe, expect, it } from 'vitest';
import { resolveAuditOptions } from '../../testing/audit/options.ts';
import { AuditWorld } from '../../testing/audit/world.ts';

function world(): AuditWorld {
  return new AuditWorld(
    resolveAuditOptions({
      appUrl: 'http://127.0.0.1:1',
      emulatorUrl: 'http://127.0.0.1:1',
      clientId: 'audit-client',
      clientSecret: 'scrub-url-password-secret-0123',
      signIn: { path: '/login', fields: (user) => ({ user }) },
      actions: [{ name: 'change_phone' }],
      probe: () => 0,
    }),
  );
}

describe('a URL with a password in what the audit reports', () => {
  it('a password holding a run of digits is redacted whole, no part of it shown', () => {
    const scrubbed = world().scrub(
      'the start answered 302 (Location https://app:hunter-8675309-pw@db.internal:5432/x)',
    );
    expect(scrubbed).toContain('https://app:[redacted]@db.internal:5432/x');
    expect(scrubbed).not.toContain('hunter');
    expect(scrubbed).not.toContain('-pw');
  });
});
