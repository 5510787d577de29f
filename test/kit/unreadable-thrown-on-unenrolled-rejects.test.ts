/**
 * A step-up guard's `onUnenrolled` that rejects with a value no one can look at (a revoked Proxy) is
 * answered as one rejecting with an Error is: the kit's error page within hookTimeouts.onUnenrolled
 * at the latest, and no unhandled rejection. The kit's handler threw on the value after its
 * deadline's timer was cleared: the request was never answered and the rejection went unhandled.
 */
import type express from 'express';
import { afterEach, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { asUserWithoutPhone, SCOPES } from '../support/step-up.ts';

let app: TestApp | undefined;
const unhandled: unknown[] = [];
const collect = (reason: unknown) => void unhandled.push(reason);
process.on('unhandledRejection', collect);
afterEach(async () => {
  await app?.close();
  app = undefined;
});

it('an async onUnenrolled rejecting with a revoked Proxy: the request is answered, nothing unhandled', async () => {
  app = await startTestApp({
    kit: { scopes: [...SCOPES], hookTimeouts: { onUnenrolled: 500 } },
    ownRoutes: (routes: express.Express, kit) => {
      routes.get(
        '/security',
        kit.requireRecentVerification({
          scope: 'security',
          maxAge: 600,
          onUnenrolled: async () => {
            const { proxy, revoke } = Proxy.revocable({}, {});
            revoke();
            throw proxy;
          },
        }),
        (_req, res) => void res.end('codes'),
      );
    },
  });
  let outcome = '';
  await asUserWithoutPhone(app, async (nobody) => {
    outcome = await nobody.request('/security', { timeoutMs: 3_000 }).then(
      (answer) => `answered ${answer.status}`,
      (error: Error) => error.message,
    );
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  process.off('unhandledRejection', collect);
  expect({ outcome, unhandled: unhandled.map((reason) => typeof reason) }).toEqual({
    outcome: 'answered 500',
    unhandled: [],
  });
});
