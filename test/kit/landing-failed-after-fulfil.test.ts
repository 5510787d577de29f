/**
 * A landing that ran the action and then failed before answering (here resolveUser throwing)
 * showed its user an error page: the arrival after it is the user's first sight of the
 * fulfilment, told 'first' as after a landing answered 503 whose fulfilment committed late. The
 * action ran once either way. A session its user signed out of meanwhile is never written into,
 * not even for that: saved, it would sign them in again.
 */
import type { Request } from 'express';
import { MemoryStore, type SessionData } from 'express-session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { USERS } from '../support/users.ts';
import { waitFor } from '../support/wait-for.ts';

let failLandingOnce = false;
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    kit: {
      resolveUser: (req: Request) => {
        if (failLandingOnce && req.path.startsWith('/verify/return')) {
          failLandingOnce = false;
          throw new Error('the user directory did not answer');
        }
        const name = (req.session as { user?: string }).user;
        return name === undefined ? null : (USERS[name] ?? { userRef: `user-${name}`, destination: '+15550100099' });
      },
    },
  });
});
afterAll(async () => {
  await app?.close();
});

it("resolveUser failing after the landing ran the action: the reload is told 'first', the action ran once", async () => {
  const user = await app.agent().signIn('alice');
  const started = await user.start('grant');
  const location = await user.verifyOnHostedPage(started);
  failLandingOnce = true;
  const failed = await user.request(location);
  expect(failed.status).toBe(500);
  expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
  expect((await user.request(location)).status).toBe(303);
  const landed = JSON.parse((await user.request('/test/landed')).body) as { landed: unknown };
  expect(landed).toEqual({ landed: { sessionId: started.sessionId, action: 'grant', fulfilment: 'first' } });
  // Told once: a further reload is a replay.
  expect((await user.request(location)).status).toBe(303);
  const again = JSON.parse((await user.request('/test/landed')).body) as { landed: unknown };
  expect(again).toEqual({ landed: { sessionId: started.sessionId, action: 'grant', fulfilment: 'replay' } });
  expect(app.grants(started.sessionId)).toBe(1);
});

describe('a landing that ran the action and then found no answer from the session store', () => {
  /** express-session's memory store, whose reads hang once told to (a store that lost its database). */
  class HangingStore extends MemoryStore {
    hang = false;
    override get(sid: string, done: (error: unknown, session?: SessionData | null) => void): void {
      if (!this.hang) super.get(sid, done);
    }
  }
  const store = new HangingStore();
  let own: TestApp | undefined;
  beforeAll(async () => {
    own = await startTestApp({
      session: { store, secret: 'hanging-store-after-fulfil' },
      kit: { hookTimeouts: { resolveUser: 300 } },
      ownRoutes: (routes) => {
        routes.post('/own/sign-out', (req, res) => req.session.destroy(() => res.json({ signedOut: true })));
        routes.get('/own/who', (req, res) => res.json({ user: (req.session as { user?: string }).user ?? null }));
      },
    });
  });
  afterAll(async () => {
    await own?.close();
  });

  it('a sign-out meanwhile stays signed out: the error page writes nothing into the destroyed session', async () => {
    const user = await own!.agent().signIn('signed-out-then-store-hangs');
    const started = await user.start('grant');
    const location = await user.verifyOnHostedPage(started);
    const { control } = own!.emulator;
    const readsBefore = (await control.stats()).statusReads;
    await control.injectFaults({ statusDelayMs: 800 });
    let landed;
    try {
      const landing = user.request(location);
      await waitFor(async () => (await control.stats()).statusReads > readsBefore, 5_000, 'the landing’s read');
      expect((await user.request('/own/sign-out', { method: 'POST' })).status).toBe(200);
      store.hang = true;
      landed = await landing;
    } finally {
      store.hang = false;
      await control.injectFaults({ statusDelayMs: 0 });
    }
    expect(landed.status).toBe(500);
    expect((await own!.attempt(started.sessionId))?.outcome).toBe('fulfilled');
    expect(JSON.parse((await user.request('/own/who')).body)).toEqual({ user: null });
  });
});
