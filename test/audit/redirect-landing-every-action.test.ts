/**
 * A ?next= on the landing, remembered and followed by the success page of one action but the
 * first of `actions`, is an open redirect all the same. redirect.landing landed the first action
 * only, and passed an app whose change_phone success page sends the user there.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

type WithNext = { next?: string };

describe("a landing's ?next= followed by the second action's success page", () => {
  it('fails redirect.landing', async () => {
    const app = await startSampleApp({
      landing: () => (req, _res, next) => {
        if (typeof req.query.next === 'string') (req.session as WithNext).next = req.query.next;
        next();
      },
      done: (req, res, ctx) => {
        const landed = ctx.kit.attempts.takeLanded(req);
        const session = req.session as WithNext;
        if (landed?.action !== 'change_phone' || session.next === undefined) return false;
        const wanted = session.next;
        delete session.next;
        res.redirect(wanted);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['redirect.landing']);
    expect(table).toMatch(/change_phone/);
  }, 120_000);
});
