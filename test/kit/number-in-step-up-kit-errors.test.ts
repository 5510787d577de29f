/**
 * A KitError a step-up guard's `onUnenrolled` throws, or passes to `next(err)`, is in the
 * integrator's words and may name a number from its own records ("no enrolment for
 * +15550001111"): the kit's log line has it masked, as any other error of the integrator's code.
 * The user's answer is the kit's page for its code, as before.
 */
import type express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { asUserWithoutPhone, SCOPES } from '../support/step-up.ts';

const NUMBER = '+15550001111';
const refusal = () => new KitError(KitErrorCode.HookFailed, `no enrolment for ${NUMBER}`);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    kit: { scopes: [...SCOPES] },
    ownRoutes: (routes: express.Express, kit) => {
      const guarded = (path: string, onUnenrolled: express.RequestHandler) =>
        routes.get(path, kit.requireRecentVerification({ scope: 'security', maxAge: 600, onUnenrolled }), (_q, res) =>
          res.send('codes'),
        );
      guarded('/throws', () => {
        throw refusal();
      });
      guarded('/passes-on', (_req, _res, next) => next(refusal()));
    },
  });
});
afterAll(async () => {
  await app?.close();
});

/** The step-up's log lines carrying the error's code. */
const loggedMessages = () =>
  app.logs
    .map((line) => JSON.parse(line) as { route?: string; code?: string; msg?: string })
    .filter((line) => line.route === 'step-up' && line.code === 'hook_failed')
    .map((line) => line.msg);

it.each(['/throws', '/passes-on'])(
  "onUnenrolled's KitError naming a number (%s): the kit's page, logged with the number masked",
  async (path) => {
    const before = loggedMessages().length;
    await asUserWithoutPhone(app, async (nobody) => {
      const answer = await nobody.request(path);
      expect(answer.status).toBe(500);
      expect(answer.body).not.toContain('codes');
      expect(answer.body).not.toContain('no enrolment');
    });
    expect(loggedMessages().slice(before)).toEqual(['no enrolment for ••\u00a011']);
    for (const line of app.logs) expect(line).not.toContain(NUMBER.slice(2));
  },
);
