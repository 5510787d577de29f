/**
 * A guarded page that sends the user on to its `?next=` once it opens, after a check that lets only
 * "a local path" through (`next.startsWith('/') && !next.startsWith('//')`): `/\evil.example/…` passes
 * that check and the browser reads it as `//evil.example/…`, an open redirect after the step-up. It
 * fails step-up.redirect, as the start's and the landing's checks plant the same spellings.
 */
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

type SessionData = { user?: string; next?: string };
const sess = (req: Request) => req.session as unknown as SessionData;

/** "Only local paths": a path starting with one slash, not two. */
const isLocalPath = (value: unknown): value is string =>
  typeof value === 'string' && value.startsWith('/') && !value.startsWith('//');

describe('step-up.redirect and a "local path only" ?next= after the step-up', () => {
  it('a guarded page redirecting to a remembered ?next= that starts with one slash fails step-up.redirect', async () => {
    const app = await startSampleApp({
      before: (app, ctx) => {
        const guard = ctx.kit.requireRecentVerification({ scope: 'see_account', maxAge: 600 });
        app.get(
          '/account',
          (req, _res, next) => {
            if (isLocalPath(req.query.next)) sess(req).next = req.query.next;
            next();
          },
          guard,
          (req, res) => {
            const wanted = sess(req).next;
            delete sess(req).next;
            res.setHeader('Cache-Control', 'no-store');
            if (wanted !== undefined) return res.redirect(wanted);
            res.send('<!doctype html><title>Your account</title><p>Account.</p>');
          },
        );
      },
    });
    apps.push(app);
    // The check the app relies on lets the backslash spelling through, and a browser reads it as another host.
    expect(isLocalPath('/\\evil.example/x')).toBe(true);
    expect(new URL('/\\evil.example/x', app.url).host).toBe('evil.example');
    const agent = new AuditAgent(app.url, () => {});
    await agent.postForm('/login', { user: 'localpath' });
    expect((await agent.request('/account?next=%2F%5Cevil.example%2Fx')).status).toBe(200);

    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.redirect'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['step-up.redirect']);
    expect(table).toMatch(
      /with \/\\evil\.example\/audit planted, after the landing, hop \d: a redirect to \/\\evil\.example\/audit leaves the app's origin/,
    );
  }, 120_000);
});
