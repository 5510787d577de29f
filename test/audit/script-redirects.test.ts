/**
 * A redirect by a script the page loads: a success page whose own script file (on the app's origin)
 * sends the user to a remembered ?next= is an open redirect as a Location is, and fails the
 * redirect checks; a sound page with ordinary links, scripts and forms of other origins does not.
 */
import type express from 'express';
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

type SessionData = { next?: string };
const sess = (req: Request) => req.session as unknown as SessionData;

/** The start remembers ?next= in the session, as a careless app does. */
function remembersNext(app: express.Express): void {
  app.post('/verify/start', (req, _res, next) => {
    if (typeof req.query.next === 'string') sess(req).next = req.query.next;
    next();
  });
}

async function audit(flaw: CustomFlaw, only: string[]) {
  const app = await startSampleApp(flaw);
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only });
  return { app, failed: failedIds(report), table: formatAuditTable(report) };
}

describe('a script file of the app sending the user to a remembered ?next=', () => {
  it('location.assign(next) written into /assets/return.js, loaded by the success page, fails redirect.start', async () => {
    const { app, failed, table } = await audit(
      {
        before: (app) => {
          remembersNext(app);
          // "The front end knows where to go back": the remembered page, written into a script.
          app.get('/assets/return.js', (req, res) => {
            const next = sess(req).next;
            res.type('application/javascript').setHeader('Cache-Control', 'no-store');
            res.send(next === undefined ? '' : `location.assign(${JSON.stringify(next)});`);
          });
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><script src="/assets/return.js"></script><p>Done.</p>');
          return true;
        },
      },
      ['redirect.start'],
    );
    // The mistake is real: after a start with ?next=, the script sends the user there.
    const agent = new AuditAgent(app.url, () => {});
    const { csrf } = JSON.parse((await agent.postForm('/login', { user: 'script-next' })).body) as { csrf: string };
    const same = { origin: app.url, 'sec-fetch-site': 'same-origin' };
    await agent.postForm('/verify/start?next=https%3A%2F%2Fevil.example%2Fx', { _csrf: csrf, action: 'grant' }, same);
    expect((await agent.request('/assets/return.js')).body).toBe('location.assign("https://evil.example/x");');
    expect(failed, table).toContain('redirect.start');
    expect(table).toMatch(/the script \/assets\/return\.js the page loads carries a planted value/);
  }, 120_000);
});

describe('a module of the app, imported by the success page, sending the user to a remembered ?next=', () => {
  /** The remembered page written into /assets/return.js, which only an import of the page loads. */
  const importedReturn = (page: string): CustomFlaw => ({
    before: (app) => {
      remembersNext(app);
      app.get('/assets/main.js', (_req, res) => {
        res.type('application/javascript').send('import { goBack } from "./return.js";\ngoBack();');
      });
      app.get('/assets/return.js', (req, res) => {
        const next = sess(req).next;
        res.type('application/javascript').setHeader('Cache-Control', 'no-store');
        res.send(`export function goBack() { location.assign(${JSON.stringify(next ?? '/')}); }`);
      });
    },
    done: (_req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.send(`<!doctype html><title>Done</title>${page}<p>Done.</p>`);
      return true;
    },
  });

  it('a module script /assets/main.js importing ./return.js fails redirect.start, naming the module', async () => {
    const page = '<script type="module" src="/assets/main.js"></script>';
    const { failed, table } = await audit(importedReturn(page), ['redirect.start']);
    expect(failed, table).toContain('redirect.start');
    expect(table).toMatch(/the script \/assets\/return\.js the page loads carries a planted value/);
  }, 120_000);

  it("an inline module script's import of /assets/return.js fails redirect.start, naming the module", async () => {
    const page = '<script type="module">import { goBack } from "/assets/return.js"; goBack();</script>';
    const { failed, table } = await audit(importedReturn(page), ['redirect.start']);
    expect(failed, table).toContain('redirect.start');
    expect(table).toMatch(/the script \/assets\/return\.js the page loads carries a planted value/);
  }, 120_000);
});

describe('a sound success page with links, scripts and forms of other origins', () => {
  it('a CDN script, a docs link and a payment form fail none of the redirect checks', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.get('/assets/app.js', (_req, res) => {
            res.type('application/javascript').send('document.title = "Done";');
          });
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send(
            '<!doctype html><title>Done</title>' +
              '<script src="https://cdn.example/lib.js"></script><script src="/assets/app.js"></script>' +
              '<a href="https://docs.example/help">Help</a>' +
              '<form action="https://pay.example/checkout" method="post"><button>Pay</button></form>',
          );
          return true;
        },
      },
      ['redirect.start', 'redirect.landing'],
    );
    expect(failed, table).toEqual([]);
  }, 120_000);
});

describe('a sound success page loading a script of the app that never finishes answering', () => {
  it('the redirect checks wait for it once in the run, not on every visit of the page, and pass', async () => {
    const app = await startSampleApp({
      before: (app) => {
        app.get('/assets/live.js', (_req, res) => {
          res.type('application/javascript');
          res.write('// ');
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send('<!doctype html><title>Done</title><script src="/assets/live.js"></script><p>Done.</p>');
        return true;
      },
    });
    apps.push(app);
    const started = Date.now();
    const report = await auditIntegration({
      ...app.auditOptions,
      timeoutMs: 2_000,
      only: ['redirect.start', 'redirect.landing'],
    });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
    // The page is visited some 25 times: 2 s each would be near a minute.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 120_000);
});
