/**
 * A guarded form bound to an account (its resource), whose handler refuses a request it already
 * carried out (409 for a note the account has), behind a shortcut past the guard for a user holding
 * a grant: another site's form adding a new note to an account the user holds a grant for runs the
 * handler. step-up.cross-site sends it for a resource whose grant is fresh and unused, as an attacker
 * would, and fails the app; the same route without the shortcut passes.
 */
import express, { type RequestHandler } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable, type AuditGuardedRoute } from 'hosted-sms-verify-kit/testing';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function accountNotesApp(shortcut: boolean) {
  const notes = new Map<string, Set<string>>();
  const own = (key: string) => notes.get(key) ?? notes.set(key, new Set()).get(key) ?? new Set<string>();
  const ran = new Map<string, number>();
  const app = await startSampleApp({
    before: (app, ctx) => {
      const guard = ctx.kit.requireRecentVerification({
        scope: 'add_payee',
        maxAge: 300,
        bindTo: (req) => String(req.params.account),
      });
      // "A user who verified for this account a moment ago need not be asked again."
      const skipWithGrant: RequestHandler = (req, res, next) => {
        const user = (req.session as { user?: string }).user;
        const confirming = (req.body as Record<string, unknown>)._verify_kit_intent !== undefined;
        if (!shortcut || user === undefined || confirming) return guard(req, res, next);
        ctx.kit.grants.list({ userRef: userNamed(user).userRef, scope: 'add_payee' }).then((grants) => {
          const account = String(req.params.account);
          if (grants.some((grant) => grant.resourceKey === account)) next();
          else guard(req, res, next);
        }, next);
      };
      app.post('/accounts/:account/notes', express.urlencoded({ extended: false }), skipWithGrant, (req, res) => {
        const user = (req.session as { user?: string }).user ?? '';
        const account = `${user}/${String(req.params.account)}`;
        if (own(account).size > 0) {
          res.status(409).send('<!doctype html><title>Already noted</title><p>This account has its note.</p>');
          return;
        }
        own(account).add(String((req.body as { note?: unknown }).note));
        ran.set(user, (ran.get(user) ?? 0) + 1);
        res.redirect(303, '/');
      });
    },
  });
  apps.push(app);
  const route: AuditGuardedRoute = {
    path: (n) => `/accounts/${n}/notes`,
    method: 'POST',
    scope: 'add_payee',
    maxAge: 300,
    resource: true,
    fields: { note: 'N' },
    effects: (user) => ran.get(user) ?? 0,
  };
  const report = await auditIntegration({ ...app.auditOptions, stepUp: [route], only: ['step-up.cross-site'] });
  return { report, table: formatAuditTable(report) };
}

describe('step-up.cross-site and a route bound to a resource', () => {
  it("a shortcut past the guard for a user holding a grant fails step-up.cross-site, another site's note added", async () => {
    const { report, table } = await accountNotesApp(true);
    expect(report.checks.find((c) => c.id === 'step-up.cross-site')?.status, table).toBe('fail');
    expect(table).toMatch(/sent from another site \(Origin https:\/\/evil\.example\): the handler ran 1 time\(s\)/);
  }, 120_000);

  it('the same route behind the guard alone passes step-up.cross-site', async () => {
    const { report, table } = await accountNotesApp(false);
    expect(report.checks.find((c) => c.id === 'step-up.cross-site')?.status, table).toBe('pass');
  }, 120_000);
});
