/**
 * Bad input gets a clear 4xx, and the integrator's error handler never shows a stack trace: with
 * the hand-written method override docs/step-up.md supports (`req.method = req.body._method`), a
 * form naming `_method` twice (`_method=delete&_method=delete`, any user can send it) leaves a list
 * as the method. The guard refuses it with its own 400, running nothing, instead of throwing a
 * TypeError of its own to Express, whose handler prints the stack (the kit's file paths).
 */
import { createServer } from 'node:http';
import express from 'express';
import session from 'express-session';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { Agent } from '../support/agent.ts';
import { closeServer, listen } from '../support/listen.ts';
import { SCOPES, TEN_MINUTES } from '../support/step-up.ts';

let app: TestApp | undefined;
const ran: string[] = [];
/** The override docs/step-up.md names: the form's `_method` as sent. */
const handWrittenOverride: express.RequestHandler = (req, _res, next) => {
  const body = req.body as { _method?: unknown } | undefined;
  if (body?._method !== undefined) req.method = body._method as string;
  next();
};

beforeAll(async () => {
  app = await startTestApp({
    kit: { scopes: [...SCOPES] },
    ownRoutes: (a, kit) => {
      a.use('/own', express.urlencoded({ extended: false }), handWrittenOverride);
      a.use('/own/vault', kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }), (req, res) => {
        ran.push(`vault ${String(req.method)}`);
        res.type('html').send('<h1>vault contents</h1>');
      });
    },
  });
});
afterAll(async () => {
  await app?.close();
});

it('a form naming _method twice gets the guard’s own 4xx: nothing run, nothing thrown to the app’s error handler', async () => {
  const alice = await app!.agent().signIn('alice');
  const sameOrigin = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
  const errorsBefore = app!.errors.length;
  const answer = await alice.postForm('/own/vault', '_method=delete&_method=delete', sameOrigin);
  expect(ran).toEqual([]);
  expect(app!.errors.slice(errorsBefore)).toEqual([]);
  expect(answer.status).toBeGreaterThanOrEqual(400);
  expect(answer.status).toBeLessThan(500);
});

it('in an app with Express’s own error handler, the answer shows no stack trace', async () => {
  const kit = app!.kit;
  const bare = express();
  bare.use(session({ secret: 'session-secret-0123456789', resave: false, saveUninitialized: false }));
  bare.post('/login', express.urlencoded({ extended: false }), (req, res) => {
    (req.session as { user?: string }).user = 'alice';
    res.json({ csrf: kit.csrfToken(req) });
  });
  bare.use('/vault', express.urlencoded({ extended: false }), handWrittenOverride);
  bare.use('/vault', kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }), (_req, res) => {
    ran.push('bare vault');
    res.send('vault contents');
  });
  const server = createServer(bare);
  const port = await listen(server);
  try {
    const url = `http://localhost:${port}`;
    const user = new Agent({
      url,
      signIn: async (agent) => ({ csrf: (await (await agent.postForm('/login', {})).json<{ csrf: string }>()).csrf }),
    });
    await user.signIn('alice');
    const answer = await user.postForm('/vault', '_method=delete&_method=delete', {
      origin: url,
      'sec-fetch-site': 'same-origin',
    });
    expect(ran).toEqual([]);
    expect(answer.body).not.toMatch(/TypeError|toUpperCase|\bat \S+ \(/);
    expect(answer.status).toBeLessThan(500);
  } finally {
    await closeServer(server);
  }
});
