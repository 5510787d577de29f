/**
 * limits.forwarded-ip proves the per-IP start limit binds a client that claims a new address with
 * every start. A 429 does not say which budget refused it, so each start is its own user's first,
 * to its own number: an app trusting every X-Forwarded-For (`trust proxy: true`) fails even when
 * its per-number budget (3 texts per 10 minutes) or its per-user one (3 an hour) is small enough
 * to refuse a fourth start by one user.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import BetterSqlite3 from 'better-sqlite3';
import express from 'express';
import session from 'express-session';
import { createVerificationKit } from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import {
  auditIntegration,
  createTestClock,
  failedIds,
  formatAuditTable,
  startEmulator,
} from 'hosted-sms-verify-kit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { closeServer, listen } from '../support/listen.ts';
import { userNamed } from '../support/users.ts';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** An app with `trust proxy: true` (req.ip is whatever X-Forwarded-For says first). */
async function trustingApp(limits: Record<string, unknown> | undefined) {
  const server = createServer();
  const port = await listen(server);
  const url = `http://localhost:${port}`;
  const clientId = 'forwarded';
  const clientSecret = `forwarded-${randomBytes(16).toString('hex')}`;
  const returnUrl = `${url}/verify/return`;
  const clock = createTestClock();
  const emulator = await startEmulator({
    port: 0,
    clients: [{ clientId, secret: clientSecret, returnUrl }],
    clock,
    log: () => {},
  });
  const db = new BetterSqlite3(':memory:');
  db.exec('CREATE TABLE confirmed (session_id TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO confirmed (session_id) VALUES (?)');
  const count = db.prepare('SELECT COUNT(*) AS n FROM confirmed WHERE session_id = ?');
  const kit = createVerificationKit<unknown>({
    baseUrl: emulator.url,
    clientId,
    clientSecret,
    returnUrl,
    store: createSqliteStore({ database: db }),
    now: clock.now,
    logger: { info: () => {}, warn: () => {}, error: () => {} },
    ...(limits === undefined ? {} : { limits }),
    resolveUser: (req) => {
      const name = (req.session as { user?: string } | undefined)?.user;
      return name === undefined ? null : userNamed(name);
    },
    actions: [
      {
        name: 'confirm_phone',
        operationSensitivity: 'normal',
        successPath: '/done',
        fulfil: (_tx, attempt) => void insert.run(attempt.sessionId),
      },
    ],
  });
  const app = express();
  app.set('trust proxy', true);
  app.use(
    session({
      name: 'app.sid',
      secret: randomBytes(16).toString('hex'),
      resave: false,
      saveUninitialized: false,
      cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto' },
    }),
  );
  app.post('/login', express.urlencoded({ extended: false }), (req, res, next) => {
    const user = (req.body as { user?: unknown }).user;
    if (typeof user !== 'string') return void res.status(400).end();
    req.session.regenerate((error) => {
      if (error) return next(error);
      (req.session as { user?: string }).user = user;
      res.json({ csrf: kit.csrfToken(req) });
    });
  });
  app.get('/done', (_req, res) => void res.send('Done.'));
  app.use(kit.router);
  server.on('request', app);
  closers.push(async () => {
    await closeServer(server);
    await kit.close();
    await emulator.close();
    db.close();
  });
  return auditIntegration({
    appUrl: url,
    emulatorUrl: emulator.url,
    clientId,
    clientSecret,
    signIn: async (agent, user) => {
      const answer = await agent.postForm('/login', { user });
      return JSON.parse(answer.body) as { csrf: string };
    },
    actions: [{ name: 'confirm_phone' }],
    kit,
    probe: (sessionId) => (count.get(sessionId) as { n: number }).n,
    only: ['limits.forwarded-ip'],
  });
}

describe('limits.forwarded-ip with trust proxy true', () => {
  it('fails it with the default budgets (control: the check works there)', async () => {
    const report = await trustingApp(undefined);
    expect(failedIds(report), formatAuditTable(report)).toEqual(['limits.forwarded-ip']);
  }, 120_000);

  it.each([
    ['per-destination budget is 3 texts per 10 minutes', { perDestination: { points: 3, durationSeconds: 600 } }],
    ['per-user budget is 3 starts an hour', { perUser: { points: 3, durationSeconds: 3600 } }],
  ])(
    'fails it too when the %s',
    async (_budget, limits) => {
      const report = await trustingApp(limits);
      const evidence = report.checks.flatMap((check) => check.evidence).join('\n');
      expect(failedIds(report), `${formatAuditTable(report)}\n${evidence}`).toEqual(['limits.forwarded-ip']);
    },
    120_000,
  );
});
