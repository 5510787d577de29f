/**
 * A step-up guard's `onUnenrolled` that hands `next(err)`, from a callback, a value no one can look
 * at (a revoked Proxy) is answered as `next(new Error(...))` is: the kit's error page, and nothing
 * thrown into the callback (from a timer, an uncaught exception that ends the process). The kit's
 * handler threw on the value after its deadline's timer was cleared: the request was never answered.
 */
import type express from 'express';
import { afterEach, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { asUserWithoutPhone, SCOPES } from '../support/step-up.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

it('next(revoked Proxy) from a callback: the request is answered, and next() throws nothing at its caller', async () => {
  const thrownAtCaller: string[] = [];
  app = await startTestApp({
    kit: { scopes: [...SCOPES], hookTimeouts: { onUnenrolled: 500 } },
    ownRoutes: (routes: express.Express, kit) => {
      routes.get(
        '/security',
        kit.requireRecentVerification({
          scope: 'security',
          maxAge: 600,
          onUnenrolled: (_req, _res, next) => {
            setImmediate(() => {
              const { proxy, revoke } = Proxy.revocable({}, {});
              revoke();
              // Caught here only so that the test process survives to report it: an app's callback
              // has no reason to guard its next(err), and uncaught this ends the process.
              try {
                next(proxy);
              } catch (error) {
                thrownAtCaller.push(error instanceof Error ? error.message : typeof error);
              }
            });
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
  expect({ outcome, thrownAtCaller }).toEqual({ outcome: 'answered 500', thrownAtCaller: [] });
});
