/**
 * The pages a user sees before the start (home, the sign-in page) are opened by redirect.start with
 * a planted "where next" in their query: one that sends a signed-in user straight on to its ?next=
 * is an open redirect of its own, and fails the check; a home page that sends the user to a fixed
 * page of the app does not, nor one sending it to another page of the app with its query kept.
 */
import type express from 'express';
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const signedIn = (req: Request) => (req.session as { user?: string }).user !== undefined;

async function audit(home: (app: express.Express) => void) {
  const app = await startSampleApp({ before: home });
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
  return { app, failed: failedIds(report), table: formatAuditTable(report) };
}

describe('redirect.start and the pages visited before the start', () => {
  it('a home page sending a signed-in user on to its ?next= ("you are signed in: continue") fails redirect.start', async () => {
    const { app, failed, table } = await audit((app) => {
      app.get('/', (req, res) => {
        const next = req.query.next;
        if (signedIn(req) && typeof next === 'string') return res.redirect(next);
        res.send('<!doctype html><title>Home</title><p>Home.</p>');
      });
    });
    // The mistake is real: a signed-in user opening /?next=https://evil.example/x is sent there.
    const agent = new AuditAgent(app.url, () => {});
    await agent.postForm('/login', { user: 'homenext' });
    const answer = await agent.request('/?next=https%3A%2F%2Fevil.example%2Fx');
    expect(answer.location).toBe('https://evil.example/x');
    expect(failed, table).toEqual(['redirect.start']);
    // Why, before the answer's URL (every planted name in it), which the evidence line's cut may end.
    expect(table).toMatch(
      /- \/ with \d+ names = https:\/\/evil\.example\/audit, hop 1: a redirect to https:\/\/evil\.example\/audit carries a planted value \(\/\?next=/,
    );
  }, 120_000);

  it('a home page sending a signed-in user to a fixed page of the app passes redirect.start', async () => {
    const { failed, table } = await audit((app) => {
      app.get('/', (req, res) => {
        if (signedIn(req)) return res.redirect('/welcome');
        res.send('<!doctype html><title>Home</title><p>Home.</p>');
      });
      app.get('/welcome', (_req, res) => {
        res.send('<!doctype html><title>Welcome</title><p>Welcome back.</p>');
      });
    });
    expect(failed, table).toEqual([]);
    expect(table).toMatch(/redirect\.start\s+pass/i);
  }, 120_000);

  it('a home page sending the user to its own language, its query kept (/ to /en/?next=...), passes redirect.start', async () => {
    const { failed, table } = await audit((app) => {
      app.get('/', (req, res) => {
        const query = req.originalUrl.indexOf('?');
        res.redirect(302, `/en/${query < 0 ? '' : req.originalUrl.slice(query)}`);
      });
      app.get('/en/', (_req, res) => {
        res.send('<!doctype html><title>Home</title><p>Home.</p>');
      });
    });
    expect(failed, table).toEqual([]);
    expect(table).toMatch(/redirect\.start\s+pass/i);
  }, 120_000);

  it('a home page redirecting on its own origin, the query kept, past the hops followed fails redirect.start', async () => {
    const { failed, table } = await audit((app) => {
      // Each hop another page of the app, the planted ?next= carried on: a browser would follow it further.
      app.get(['/', '/hop/:n'], (req, res) => {
        const query = req.originalUrl.indexOf('?');
        res.redirect(302, `/hop/${Number(req.params.n ?? 0) + 1}${query < 0 ? '' : req.originalUrl.slice(query)}`);
      });
    });
    expect(failed, table).toEqual(['redirect.start']);
    expect(table).toMatch(/still redirecting after \d+ hops, to \/hop\/\d+\?next=/);
  }, 120_000);
});
