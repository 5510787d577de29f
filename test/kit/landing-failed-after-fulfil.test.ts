/**
 * A landing that ran the action and then failed before answering (here resolveUser throwing)
 * showed its user an error page: the arrival after it is the user's first sight of the
 * fulfilment, told 'first' as after a landing answered 503 whose fulfilment committed late. The
 * action ran once either way.
 */
import type { Request } from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { USERS } from '../support/users.ts';

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
