/**
 * A redirect by a script the page loads: a success page whose own script file (on the app's origin)
 * sends the user to a remembered ?next= is an open redirect as a Location is, and fails the
 * redirect checks; a sound page with ordinary links, scripts and forms of other origins does not.
 */
import type express from 'express';
import type { Request, Response } from 'express';
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

describe('a frame of the app, in a page on the way, sending the top window to a planted ?next=', () => {
  /** The frame's script: the top window sent to the `next` of a URL it reads. */
  const sendsTop = (from: string) => `top.location = new URLSearchParams(${from}.search).get('next') || '/';`;
  const framePage = (script: string) => `<!doctype html><title>Back</title><script>${script}</script>`;

  it.each([
    ['in the page', (res: Response) => res.send(framePage(sendsTop('location')))],
    [
      'in a script file',
      (res: Response) => res.send('<!doctype html><title>Back</title><script src="/assets/back.js"></script>'),
    ],
  ])(
    "a success page framing /return-frame?next=<the remembered ?next=>, whose script (%s) reads the frame's own URL, fails redirect.start",
    async (_, serveFrame) => {
      const { failed, table } = await audit(
        {
          before: (app) => {
            remembersNext(app);
            app.get('/return-frame', (_req, res) => serveFrame(res));
            app.get('/assets/back.js', (_req, res) => res.type('application/javascript').send(sendsTop('location')));
          },
          done: (req, res) => {
            const next = sess(req).next ?? '/';
            res.setHeader('Cache-Control', 'no-store');
            res.send(
              `<!doctype html><title>Done</title><p>Done.</p><iframe src="/return-frame?next=${encodeURIComponent(next)}"></iframe>`,
            );
            return true;
          },
        },
        ['redirect.start'],
      );
      expect(failed, table).toContain('redirect.start');
      expect(table).toMatch(
        /of the frame \/return-frame the page loads reads a URL carrying a planted value|the script \/assets\/back\.js a frame of the page runs reads a URL carrying a planted value/,
      );
    },
    120_000,
  );

  it('a success page framing /return-frame whose page writes the remembered ?next= into its script fails redirect.start', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          remembersNext(app);
          app.get('/return-frame', (req, res) => {
            res.setHeader('Cache-Control', 'no-store');
            res.send(framePage(`top.location = ${JSON.stringify(sess(req).next ?? '/')};`));
          });
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><p>Done.</p><iframe src="/return-frame"></iframe>');
          return true;
        },
      },
      ['redirect.start'],
    );
    expect(failed, table).toContain('redirect.start');
    expect(table).toMatch(/a <script> of the frame \/return-frame the page loads carries a planted value/);
  }, 120_000);

  it("a landing page framing /return-frame, whose script reads the parent's URL (parent.location), fails redirect.landing", async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.get('/return-frame', (_req, res) => res.send(framePage(sendsTop('parent.location'))));
        },
        // "Taking you back": a landing with a ?next= shows a page whose frame sends the user on.
        landing: () => (req, res, next) => {
          if (typeof req.query.next !== 'string') return next();
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Taking you back</title><iframe src="/return-frame"></iframe>');
        },
      },
      ['redirect.landing'],
    );
    expect(failed, table).toContain('redirect.landing');
    expect(table).toMatch(/of the frame \/return-frame the page loads reads a URL carrying a planted value/);
  }, 120_000);

  it('a sound success page framing a widget of the app whose script reads its own URL fails none of the redirect checks', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          // The widget picks its language from its URL, reloading itself once with one.
          const script =
            "if (!new URLSearchParams(location.search).get('lang')) location.replace('/support/widget?lang=en');";
          app.get('/support/widget', (_req, res) => res.send(framePage(script)));
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><p>Done.</p><iframe src="/support/widget"></iframe>');
          return true;
        },
      },
      ['redirect.start', 'redirect.landing'],
    );
    expect(failed, table).toEqual([]);
  }, 120_000);
});
