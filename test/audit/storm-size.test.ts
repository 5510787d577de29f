/**
 * A reload storm of one landing is no storm: nothing lands at once with it, and replay.storm would
 * pass an app that runs the action once per landing reading "not yet fulfilled" at the same time.
 * `stormSize` below 2 is refused with the fix, before any request.
 */
import { describe, expect, it } from 'vitest';
import { auditIntegration } from 'hosted-sms-verify-kit/testing';

describe('stormSize', () => {
  it('1 is refused: a storm needs two landings at once', async () => {
    const call = auditIntegration({
      appUrl: 'http://localhost:9',
      emulatorUrl: 'http://localhost:9',
      clientId: 'c',
      clientSecret: 's'.repeat(32),
      signIn: async () => ({ csrf: 'x' }),
      actions: [{ name: 'grant' }],
      probe: () => 0,
      stormSize: 1,
    });
    await expect(call).rejects.toThrow('`stormSize` must be a whole number from 2 to 100.');
  });
});
