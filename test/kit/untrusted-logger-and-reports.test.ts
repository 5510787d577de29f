/**
 * The integrator's logger and report hooks are outside the kit's trust for liveness: a logger
 * whose methods throw or reject, an `onOutcome` that throws and an `onReport` that rejects never
 * change a request's answer after its effect, never stall the sweep and never leave an unhandled
 * rejection (which ends a Node process with code 1 and a stack).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KitLogger } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { parseHandoffPage } from '../support/agent.ts';
import { newSeen } from '../support/seen.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';
import { waitFor } from '../support/wait-for.ts';

let app: TestApp | undefined;
const unhandled = watchUnhandledRejections();

afterEach(async () => {
  await app?.close();
  app = undefined;
});

const throwing: KitLogger = {
  info: () => {
    throw new Error('log sink down');
  },
  warn: () => {
    throw new Error('log sink down');
  },
  error: () => {
    throw new Error('log sink down');
  },
};

/** Async methods (a logger shipping lines over the network) that reject. */
const rejecting: KitLogger = {
  info: async () => Promise.reject(new Error('log shipper down')),
  warn: async () => Promise.reject(new Error('log shipper down')),
  error: async () => Promise.reject(new Error('log shipper down')),
};

/** Start, verify, land: the answers, and how many times the action ran. */
async function startAndLand(site: TestApp) {
  const alice = await site.agent(newSeen()).signIn('alice');
  const started = await alice.tryStart('grant_badge');
  const { sessionId, state } = await site.latestAttempt();
  // The session exists whatever the start answered: complete it as the user would have.
  const page = parseHandoffPage(started.body);
  const location =
    page === undefined
      ? `/verify/return?session_id=${sessionId}&state=${state}`
      : await alice.verifyOnHostedPage({ ...page, sessionId });
  if (page === undefined) await site.emulator.control.completeSession(sessionId, 'verified');
  const landing = await alice.request(location);
  const reload = await alice.landFor(sessionId, state);
  return { start: started.status, landing: landing.status, reload: reload.status, grants: site.grants(sessionId) };
}

describe('a logger that throws', () => {
  it('the start answers its handoff page and the landing its 303, the action runs once, with onOutcome throwing too', async () => {
    app = await startTestApp({
      kit: {
        logger: throwing,
        onOutcome: () => {
          throw new Error('outcome sink down');
        },
      },
    });
    expect(await startAndLand(app)).toEqual({ start: 200, landing: 303, reload: 303, grants: 1 });
    expect(await unhandled.settled()).toEqual([]);
  });
});

describe('a logger whose methods reject', () => {
  it('leaves no unhandled rejection through a start, a landing and sweep runs', async () => {
    app = await startTestApp({ kit: { logger: rejecting } });
    expect(await startAndLand(app)).toEqual({ start: 200, landing: 303, reload: 303, grants: 1 });
    await app.kit.runSweep();
    await app.kit.runSweep({ logger: rejecting });
    expect(await unhandled.settled()).toEqual([]);
  });
});

describe('a sweep worker whose onReport rejects', () => {
  it('keeps running on its interval, and nothing reaches the process as an unhandled rejection', async () => {
    app = await startTestApp({ kit: { logger: rejecting } });
    let reports = 0;
    const worker = app.kit.startSweepWorker({
      intervalMs: 10,
      onReport: async () => {
        reports++;
        throw new Error('report sink down');
      },
      onError: async () => {
        throw new Error('error sink down');
      },
    });
    await waitFor(() => worker.runs >= 3, 10_000, 'three worker runs');
    await worker.stop();
    expect(reports).toBeGreaterThanOrEqual(3);
    expect(await unhandled.settled()).toEqual([]);
  });
});
