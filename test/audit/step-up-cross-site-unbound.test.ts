/**
 * A guarded form bound to no resource, whose handler refuses a request it already carried out
 * (409 for a note it has), behind a shortcut past the guard for a user holding a grant: another
 * site's form adding a new note runs the handler. step-up.cross-site sends another site's form for
 * a new request, as an attacker would, and fails the app; the same route without the shortcut passes.
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

async function notesApp(shortcut: boolean) {
  const notes = new Map<string, Set<string>>();
  const own = (user: string) => notes.get(user) ?? notes.set(user, new Set()).get(user) ?? new Set<string>();
  const app = await startSampleApp({
    before: (app, ctx) => {
      const guard = ctx.kit.requireRecentVerification({ scope: 'add_payee', maxAge: 300 });
      // "A user who verified a moment ago need not be asked again."
      const skipWithGrant: RequestHandler = (req, res, next) => {
        const user = (req.session as { user?: string }).user;
        // The kit's own confirmation of a kept form goes to the guard, which runs it.
        const confirming = (req.body as Record<string, unknown>)._verify_kit_intent !== undefined;
        if (!shortcut || user === undefined || confirming) return guard(req, res, next);
        ctx.kit.grants.list({ userRef: userNamed(user).userRef, scope: 'add_payee' }).then((grants) => {
          if (grants.length > 0) next();
          else guard(req, res, next);
        }, next);
      };
      app.post('/notes', express.urlencoded({ extended: false }), skipWithGrant, (req, res) => {
        const user = (req.session as { user?: string }).user ?? '';
        const note = String((req.body as { note?: unknown }).note);
        if (own(user).has(note)) {
          res.status(409).send('<!doctype html><title>Already noted</title><p>You have this note.</p>');
          return;
        }
        own(user).add(note);
        res.redirect(303, '/');
      });
    },
  });
  apps.push(app);
  const route: AuditGuardedRoute = {
    path: '/notes',
    method: 'POST',
    scope: 'add_payee',
    maxAge: 300,
    fields: (n) => ({ note: `N${n}` }),
    effects: (user) => own(user).size,
  };
  const report = await auditIntegration({ ...app.auditOptions, stepUp: [route], only: ['step-up.cross-site'] });
  return { report, table: formatAuditTable(report) };
}

describe('step-up.cross-site and a route bound to no resource', () => {
  it("a shortcut past the guard for a user holding a grant fails step-up.cross-site, another site's new note added", async () => {
    const { report, table } = await notesApp(true);
    expect(report.checks.find((c) => c.id === 'step-up.cross-site')?.status, table).toBe('fail');
    expect(table).toMatch(/sent from another site \(Origin https:\/\/evil\.example\): the handler ran 1 time\(s\)/);
  }, 120_000);

  it('the same route behind the guard alone passes step-up.cross-site', async () => {
    const { report, table } = await notesApp(false);
    expect(report.checks.find((c) => c.id === 'step-up.cross-site')?.status, table).toBe('pass');
  }, 120_000);
});
