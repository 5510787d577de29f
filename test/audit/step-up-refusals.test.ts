/**
 * A guarded form whose grant outlives the policy (a guard given a day where the policy says five
 * minutes) runs its handler again after maxAge: a handler refusing a payee it already has (409)
 * is the handler answering, not the guard asking, and fails step-up.expired. The guard asking
 * (its "Confirm it's you" page) is what passes.
 */
import type { Request } from 'express';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable, type AuditGuardedRoute } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** Mounts POST /payees behind a guard of `maxAge` seconds; its handler refuses a payee the user has (409). */
async function payeeApp(maxAge: number) {
  const payees = new Map<string, Set<string>>();
  const own = (user: string) => payees.get(user) ?? payees.set(user, new Set()).get(user) ?? new Set<string>();
  const app = await startSampleApp({
    before: (app, ctx) => {
      const guard = ctx.kit.requireRecentVerification({
        scope: 'add_payee',
        maxAge,
        bindTo: (req: Request) => (req.body as { payee?: string }).payee,
      });
      app.post('/payees', express.urlencoded({ extended: false }), guard, (req, res) => {
        const user = (req.session as { user?: string }).user ?? '';
        const payee = String((req.body as { payee?: unknown }).payee);
        if (own(user).has(payee)) {
          res.status(409).send('<!doctype html><title>Already a payee</title><p>You already pay them.</p>');
          return;
        }
        own(user).add(payee);
        res.redirect(303, '/');
      });
    },
  });
  apps.push(app);
  const route: AuditGuardedRoute = {
    path: '/payees',
    method: 'POST',
    scope: 'add_payee',
    maxAge: 300,
    fields: (n) => ({ payee: `P${n}` }),
    resource: true,
    effects: (user) => own(user).size,
  };
  const report = await auditIntegration({ ...app.auditOptions, stepUp: [route], only: ['step-up.expired'] });
  return { report, table: formatAuditTable(report) };
}

describe('step-up.expired and a handler that refuses a request it already carried out', () => {
  it('a guard of a day where the policy says 300 s, its handler answering 409 for a payee it has, fails step-up.expired', async () => {
    const { report, table } = await payeeApp(86_400);
    const check = report.checks.find((c) => c.id === 'step-up.expired');
    expect(check?.status, table).toBe('fail');
    expect(table).toMatch(
      /\d+ s after the grant, POST \/payees \(scope add_payee, resource 1\) opened: .*answered 409/,
    );
  }, 120_000);

  it('a guard of the 300 s the policy says passes step-up.expired, the handler answering 409 for a payee it has all the same', async () => {
    const { report, table } = await payeeApp(300);
    const check = report.checks.find((c) => c.id === 'step-up.expired');
    expect(check?.status, table).toBe('pass');
  }, 120_000);
});
