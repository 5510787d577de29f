/**
 * A sign-in form's `fields(user)` may be async: an app on PostgreSQL creates the audit's user with
 * an awaited query before the form is sent. Its rejection fails the run's sign-in with one sentence.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable, type SignInForm } from 'hosted-sms-verify-kit/testing';
import express from 'express';
import { startDemoTarget, type DemoTarget } from './demo-target.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

let target: DemoTarget | undefined;
const apps: SampleApp[] = [];
afterAll(async () => {
  await target?.close();
  await Promise.all(apps.map((app) => app.close()));
});

describe("a sign-in form's async fields", () => {
  it('are awaited: the user is created first (an awaited query), then the form is sent and the checks run', async () => {
    target = await startDemoTarget();
    const form = target.options.signIn as SignInForm;
    const created: string[] = [];
    const report = await auditIntegration({
      ...target.options,
      signIn: {
        ...form,
        // As `await pool.query('INSERT INTO users ...')` would: the user exists only after a turn.
        fields: async (user) => {
          await delay(5);
          created.push(user);
          return form.fields(user);
        },
      },
      only: ['cookie.flags', 'csrf.no-token'],
    });
    expect(report.stopped, formatAuditTable(report)).toBeUndefined();
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
    expect(created.length).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('that reject stop the run with one sentence naming them', async () => {
    target ??= await startDemoTarget();
    const form = target.options.signIn as SignInForm;
    const report = await auditIntegration({
      ...target.options,
      signIn: { ...form, fields: () => Promise.reject(new Error('users table is locked')) },
      only: ['cookie.flags'],
    });
    expect(report.stopped).toMatch(/your signIn form's fields\('[^']+'\) failed: users table is locked$/);
  }, 120_000);
});

describe('a sign-in form and a start form written with single quotes', () => {
  it("are read as a browser reads them: the sign-in page's token is sent back and the start form's _csrf found", async () => {
    const signInTokens: string[] = [];
    const app = await startSampleApp({
      before: (server, ctx) => {
        // Pages of an app whose templates quote attributes with ' (and write type=hidden bare).
        server.get('/signin', (_req, res) => {
          res.send(
            "<!doctype html><title>Sign in</title><form method='post' action='/signin'><input type=hidden name='_csrf' value='signin-token'><input name='user'><button>Sign in</button></form>",
          );
        });
        server.post('/signin', express.urlencoded({ extended: false }), (req, res, next) => {
          const { _csrf: token = '', user } = req.body as { _csrf?: string; user?: string };
          signInTokens.push(token);
          if (token !== 'signin-token') {
            res.status(403).send('bad token');
            return;
          }
          req.url = '/login';
          req.body = { user };
          next();
        });
        server.get('/home', (req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send(
            `<!doctype html><title>Home</title><form method='post' action='/verify/start'><input type='hidden' name='_csrf' value='${ctx.kit.csrfToken(req)}'><button name='action' value='grant'>Confirm</button></form>`,
          );
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      signIn: { path: '/signin', fields: (user) => ({ user }), csrfFrom: '/home' },
      only: ['forged.wrong-state'],
    });
    expect(report.stopped, formatAuditTable(report)).toBeUndefined();
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
    expect(signInTokens.length).toBeGreaterThan(0);
    expect(new Set(signInTokens)).toEqual(new Set(['signin-token']));
  }, 120_000);
});
