/**
 * The numbers the audit types (`AuditWorld.newNumber`): each is new in its run. A number typed
 * twice is a number shown where another check typed it: `entered.number-masked` then took the
 * other check's own request (a start link's query) for a leak of its number, and failed a sound
 * app now and then.
 */
import { describe, expect, it } from 'vitest';
import { resolveAuditOptions } from '../../testing/audit/options.ts';
import { AuditWorld, digitsOf } from '../../testing/audit/world.ts';

function world(): AuditWorld {
  return new AuditWorld(
    resolveAuditOptions({
      appUrl: 'http://127.0.0.1:1',
      emulatorUrl: 'http://127.0.0.1:1',
      clientId: 'audit-client',
      clientSecret: 'typed-numbers-secret-0123',
      signIn: { path: '/login', fields: (user) => ({ user }) },
      actions: [{ name: 'change_phone' }],
      probe: () => 0,
    }),
  );
}

describe('the numbers one audit run types', () => {
  it('are all different, as the entered-number checks search for each (20 000 of them, a fifth of the range)', () => {
    const run = world();
    const numbers = Array.from({ length: 20_000 }, () => digitsOf(run.newNumber()));
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const number of numbers.slice(0, 50)) expect(number).toMatch(/^4474001\d{5}$/);
  });
});
