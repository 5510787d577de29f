/**
 * The step-up guard's own callbacks are the integrator's code, outside the kit's trust for
 * liveness: a `bindTo` that hangs answers the kit's error page within its deadline
 * (`hookTimeouts.bindTo`) and runs nothing; an `onUnenrolled` that rejects is answered by the kit
 * and never reaches the process as an unhandled rejection; neither does a text function of its pages.
 */
import type express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { SCOPES } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

type Kind = { name: 'sqlite' | 'postgres'; unavailable: string | undefined };
const KINDS: Kind[] = [
  { name: 'sqlite', unavailable: undefined },
  { name: 'postgres', unavailable: postgresUnavailable },
];

let app: TestApp | undefined;
let database: TestDatabase | undefined;
const unhandled: unknown[] = [];
const collect = (reason: unknown) => void unhandled.push(reason);

beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', collect);
});
afterEach(async () => {
  process.off('unhandledRejection', collect);
  await app?.close();
  app = undefined;
  await database?.drop();
  database = undefined;
});

/** Lets a rejection nobody handled reach the process's listeners. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe.each(KINDS)('the step-up guard’s callbacks on $name', (kind) => {
  if (kind.unavailable !== undefined) {
    it.skip(`not run: ${kind.unavailable}`, () => {});
    return;
  }
  /** The kit on this store: PostgreSQL gets a scratch database per test. */
  async function storeOptions() {
    if (kind.name === 'sqlite') return {};
    database = await createTestDatabase();
    return { database: { url: database.url } };
  }

  it('a bindTo that never settles: the request gets the error page within hookTimeouts.bindTo, the handler never runs', async () => {
    let handlerRan = false;
    let bindToCalled = false;
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES], hookTimeouts: { bindTo: 200 } },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get(
          '/accounts/:account/statement',
          kit.requireRecentVerification({
            scope: 'payout',
            maxAge: 300,
            bindTo: () => {
              bindToCalled = true;
              return new Promise<string>(() => {});
            },
          }),
          (_req, res) => {
            handlerRan = true;
            res.send('statement');
          },
        );
      },
    });
    const alice = await app.agent().signIn('alice');
    const began = performance.now();
    const answer = await alice.request('/accounts/acct-1/statement');
    expect(bindToCalled).toBe(true);
    expect(performance.now() - began).toBeLessThan(5_000);
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('statement');
    expect(answer.body).not.toMatch(/at .*\.ts:\d+/); // no stack trace
    expect(handlerRan).toBe(false);
    expect(app.logs.some((line) => line.includes('bindTo did not settle within 200 ms'))).toBe(true);
  });

  it('an onUnenrolled that rejects: the kit answers the request and no rejection reaches the process', async () => {
    let handlerRan = false;
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get(
          '/security',
          kit.requireRecentVerification({
            scope: 'security',
            maxAge: 600,
            onUnenrolled: async () => {
              throw new Error('enrolment page down');
            },
          }),
          (_req, res) => {
            handlerRan = true;
            res.send('codes');
          },
        );
      },
    });
    USERS.nophone = { userRef: 'user-nophone', destination: '' };
    try {
      const nobody = await app.agent().signIn('nophone');
      const answer = await nobody.request('/security');
      await settle();
      expect(answer.status).toBe(500);
      expect(answer.body).not.toContain('codes');
      expect(answer.body).not.toContain('enrolment page down');
      expect(handlerRan).toBe(false);
      expect(unhandled).toEqual([]);
    } finally {
      delete USERS.nophone;
    }
  });

  it("a messages.stepUp.text that rejects: the Confirm it's you page shows the English text, nothing reaches the process", async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        scopes: [...SCOPES],
        messages: {
          en: {
            stepUp: { text: (() => Promise.reject(new Error('no text today'))) as unknown as (n: string) => string },
          },
        },
      },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get('/security', kit.requireRecentVerification({ scope: 'payout', maxAge: 300 }), (_req, res) => {
          res.send('security');
        });
      },
    });
    const alice = await app.agent().signIn('alice');
    const answer = await alice.request('/security');
    await settle();
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('To continue, confirm it’s you with a code we text to your number ending');
    expect(answer.body).not.toContain('[object Promise]');
    expect(unhandled).toEqual([]);
  });
});
