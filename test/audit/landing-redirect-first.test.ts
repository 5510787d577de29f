/**
 * An app that sends the user on to the landing's ?next= only after the first landing of an attempt
 * (its success page reads kit.attempts.takeLanded: `fulfilment === 'first'`), and only when next
 * "starts with /", is an open redirect: `//evil.example/audit` starts with /. redirect.landing tried
 * every planted value on one attempt, each after the first a replay, and passed it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

type WithNext = { next?: string };

describe('a landing whose ?next= is followed on the first landing only', () => {
  it('fails redirect.landing on //evil.example/audit', async () => {
    const app = await startSampleApp({
      landing: () => (req, _res, next) => {
        const wanted = req.query.next;
        if (typeof wanted === 'string') (req.session as WithNext).next = wanted;
        next();
      },
      done: (req, res, ctx) => {
        const landed = ctx.kit.attempts.takeLanded(req);
        const session = req.session as WithNext;
        const wanted = session.next;
        delete session.next;
        if (landed?.fulfilment !== 'first' || wanted === undefined || !wanted.startsWith('/')) return false;
        res.redirect(wanted);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['redirect.landing']);
    expect(table).toMatch(/a redirect to \/\/evil\.example\/audit/);
  }, 120_000);
});
