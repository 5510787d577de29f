/**
 * The step-up guard's onUnenrolled is the integrator's code, outside the kit's trust for liveness:
 * one that neither answers nor calls next() within `hookTimeouts.onUnenrolled` (a promise that
 * never settles, a callback that never fires) gets the kit's error page then, never leaving the
 * user's request open; the guarded handler never runs; one that answers late changes nothing and
 * the app goes on serving.
 */
import type express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { SCOPES } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

type Unenrolled = (req: express.Request, res: express.Response, next: express.NextFunction) => unknown;

async function appWith(onUnenrolled: Unenrolled, ran: { handler: boolean }) {
  return startTestApp({
    kit: { scopes: [...SCOPES], hookTimeouts: { onUnenrolled: 300 } },
    ownRoutes: (routes: express.Express, kit) => {
      routes.get(
        '/security',
        kit.requireRecentVerification({
          scope: 'security',
          maxAge: 600,
          onUnenrolled: onUnenrolled as express.RequestHandler,
        }),
        (_req, res) => {
          ran.handler = true;
          res.send('codes');
        },
      );
      routes.get('/ping', (_req, res) => res.send('pong'));
    },
  });
}

describe('an onUnenrolled that neither answers nor calls next()', () => {
  it.each([
    ['returns a promise that never settles', (() => new Promise<void>(() => {})) as Unenrolled],
    ['waits on a callback that never fires (returns nothing)', (() => undefined) as Unenrolled],
  ])(
    '%s: the user gets the kit’s error page after hookTimeouts.onUnenrolled, the handler never runs',
    async (_what, hung) => {
      const ran = { handler: false };
      app = await appWith(hung, ran);
      USERS.nophone = { userRef: 'user-nophone', destination: '' };
      try {
        const nobody = await app.agent().signIn('nophone');
        const began = Date.now();
        const answer = await nobody.request('/security');
        expect(Date.now() - began).toBeLessThan(5_000);
        expect(answer.status).toBe(500);
        expect(answer.body).toMatch(/^<!doctype html>/i); // the kit's page, whole
        expect(answer.body).toContain('</html>');
        expect(answer.body).not.toMatch(/at .*\.(ts|js):\d+/);
        expect(ran.handler).toBe(false);
        expect(
          app.logs.some((line) => line.includes('onUnenrolled neither answered nor called next() within 300 ms')),
        ).toBe(true);
      } finally {
        delete USERS.nophone;
      }
    },
  );

  it('one that answers after the deadline changes nothing: the user had the error page, the app goes on serving', async () => {
    const ran = { handler: false };
    app = await appWith((_req, res) => {
      setTimeout(() => res.redirect('/enrol'), 800);
    }, ran);
    USERS.nophone = { userRef: 'user-nophone', destination: '' };
    try {
      const nobody = await app.agent().signIn('nophone');
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(500);
      expect(answer.body).toContain('</html>');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect((await nobody.request('/ping')).body).toBe('pong');
      expect(ran.handler).toBe(false);
    } finally {
      delete USERS.nophone;
    }
  });
});
