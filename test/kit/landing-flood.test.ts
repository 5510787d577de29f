/**
 * Status reads cost the integrator: a flood of landings for one pending attempt must not turn into
 * a flood of reads at the service. Reads of one session coalesce within an instance (one in flight
 * at a time, and a `pending` answer is reused for a short while).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
beforeAll(async () => {
  // The kit's own landing defaults (3 re-checks 600 ms apart), not the suites' quick ones.
  app = await startTestApp({ kit: { landing: undefined } });
});
afterAll(async () => {
  await app?.close();
});

describe('a flood of landings for one pending attempt', () => {
  it('costs the service a few status reads, not one per landing and re-check', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const started = await alice.start('grant_badge');
    const before = (await app.emulator.control.stats()).statusReads;
    const startedAt = performance.now();
    const landings = await Promise.all(
      Array.from({ length: 40 }, () => app.agent(seen).landFor(started.sessionId, started.state)),
    );
    expect(landings.every((answer) => answer.status === 200)).toBe(true);
    const seconds = (performance.now() - startedAt) / 1000;
    const reads = (await app.emulator.control.stats()).statusReads - before;
    console.log(`40 concurrent landings of one pending attempt: ${reads} status reads in ${seconds.toFixed(1)} s`);
    // One read in flight at a time, a pending answer reused for 500 ms: at most about two a second
    // (each landing alone would read 4 times: 160).
    expect(reads).toBeLessThanOrEqual(2 + 2 * Math.ceil(seconds));
    expect(reads).toBeLessThan(20);
  });

  it('still sees the outcome once the service has it: a verified landing after the flood is fulfilled', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const started = await alice.start('grant_badge');
    await Promise.all(Array.from({ length: 10 }, () => app.agent(seen).landFor(started.sessionId, started.state)));
    await alice.verifyOnHostedPage(started);
    // The pending answer is reused only briefly: wait it out, as a user's next landing would.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const landed = await alice.landFor(started.sessionId, started.state);
    expect(landed.status).toBe(303);
    expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
  });
});
