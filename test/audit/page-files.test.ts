/**
 * The files the app's pages load (scripts, stylesheets, a script's source map), fetched by the leak
 * checks' tour: one the audit cannot read is no flaw of a sound app, and a secret in one is found
 * even when the tour itself could not walk the hosted page.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const TOUR_CHECKS = ['leak.secret', 'leak.handoff', 'headers.kit-pages'];

describe('a sound app whose success page loads a file the audit cannot read', () => {
  it('a 5 MB source map (past what the audit reads of one answer) fails none of the tour checks, and is said', async () => {
    const app = await startSampleApp({
      before: (express) => {
        express.get('/assets/app.js', (_req, res) => {
          res.type('application/javascript').send('console.log("ready");\n//# sourceMappingURL=app.js.map\n');
        });
        express.get('/assets/app.js.map', (_req, res) => {
          const source = `// ${'a long bundled library '.repeat(220_000)}`;
          res.json({ version: 3, sources: ['vendor.js'], sourcesContent: [source], mappings: '' });
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send('<!doctype html><title>Done</title><script src="/assets/app.js"></script><p>Done.</p>');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: TOUR_CHECKS });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
    expect(report.checks.find((check) => check.id === 'leak.secret')?.evidence).toContainEqual(
      expect.stringMatching(/^a file a page loads was not searched: GET http:\/\/[^ ]+\/assets\/app\.js\.map /),
    );
  }, 120_000);

  it('scripts that never finish answering fail none of the tour checks; the ones left once timeoutMs has gone on them are said', async () => {
    const app = await startSampleApp({
      before: (express) => {
        express.get('/assets/slow.js', (_req, res) => {
          res.type('application/javascript');
          res.write('// ');
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        const scripts = ['a', 'b', 'c'].map((n) => `<script src="/assets/slow.js?${n}"></script>`).join('');
        res.send(`<!doctype html><title>Done</title>${scripts}<p>Done.</p>`);
        return true;
      },
    });
    apps.push(app);
    const started = Date.now();
    const report = await auditIntegration({ ...app.auditOptions, timeoutMs: 3_000, only: TOUR_CHECKS });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
    // One file's deadline, not one per file.
    expect(Date.now() - started).toBeLessThan(8_000);
    const evidence = report.checks.find((check) => check.id === 'leak.secret')?.evidence;
    expect(evidence).toContainEqual(
      expect.stringMatching(/^a file a page loads was not searched: GET http:\/\/[^ ]+\/assets\/slow\.js /),
    );
    expect(evidence).toContain("2 file(s) the pages load not fetched: the audit's `timeoutMs` went on the others");
  }, 120_000);
});

describe('a tour that cannot reach the hosted page', () => {
  it('the client secret in a script the success page loads still fails leak.secret, never not run', async () => {
    const app = await startSampleApp({
      emulatorPageHost: '::1',
      before: (express, ctx) => {
        express.get('/assets/config.js', (_req, res) => {
          res.type('application/javascript').send(`window.CONFIG = ${JSON.stringify({ s: ctx.clientSecret })};`);
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send('<!doctype html><title>Done</title><script src="/assets/config.js"></script><p>Done.</p>');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing', 'leak.secret'] });
    const leak = report.checks.find((check) => check.id === 'leak.secret');
    expect(leak?.status, formatAuditTable(report)).toBe('fail');
    expect(leak?.evidence).toContainEqual(
      expect.stringMatching(/^the client secret \(as is\) in GET \/assets\/config\.js response body$/),
    );
  }, 120_000);
});

describe("a script a page loads that redirects on the app's origin", () => {
  it('the client secret in the file /assets/config.js redirects to (a hashed name) fails leak.secret', async () => {
    const app = await startSampleApp({
      before: (express, ctx) => {
        express.get('/assets/config.js', (_req, res) => res.redirect(302, '/assets/config.3f2a9c.js'));
        express.get('/assets/config.3f2a9c.js', (_req, res) => {
          res.type('application/javascript').send(`window.CONFIG = ${JSON.stringify({ s: ctx.clientSecret })};`);
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send('<!doctype html><title>Done</title><script src="/assets/config.js"></script><p>Done.</p>');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
    expect(report.checks[0]?.evidence).toContainEqual(
      expect.stringMatching(/^the client secret \(as is\) in GET \/assets\/config\.3f2a9c\.js response body$/),
    );
  }, 120_000);

  it('files that redirect to each other without end fail none of the tour checks', async () => {
    const app = await startSampleApp({
      before: (express) => {
        express.get('/assets/a.js', (req, res) => res.redirect(302, `/assets/b.js?n=${String(req.query.n ?? 0)}`));
        express.get('/assets/b.js', (req, res) => res.redirect(302, `/assets/a.js?n=${Number(req.query.n ?? 0) + 1}`));
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send('<!doctype html><title>Done</title><script src="/assets/a.js"></script><p>Done.</p>');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: TOUR_CHECKS });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});

describe('a source map named by a header', () => {
  it("the client secret in the source map a script's SourceMap header names fails leak.secret", async () => {
    const app = await startSampleApp({
      before: (express, ctx) => {
        // The bundler keeps the comment out of the file and names the map in a header instead.
        express.get('/assets/app.js', (_req, res) => {
          res.setHeader('SourceMap', '/assets/app.js.map');
          res.type('application/javascript').send('console.log("ready");\n');
        });
        express.get('/assets/app.js.map', (_req, res) => {
          const server = `const client = { secret: ${JSON.stringify(ctx.clientSecret)} };`;
          res.json({ version: 3, sources: ['server.js'], sourcesContent: [server], mappings: '' });
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send('<!doctype html><title>Done</title><script src="/assets/app.js"></script><p>Done.</p>');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
    expect(report.checks[0]?.evidence).toContainEqual(
      expect.stringMatching(/ in GET \/assets\/app\.js\.map response body$/),
    );
  }, 120_000);
});

describe('a module a script imports', () => {
  it('the client secret in a module the page script imports (statically or by import()) fails leak.secret', async () => {
    for (const imported of [
      "import { CONFIG } from './config.js';",
      "const { CONFIG } = await import('./config.js');",
    ]) {
      const app = await startSampleApp({
        before: (express, ctx) => {
          express.get('/assets/main.js', (_req, res) => {
            res.type('application/javascript').send(`${imported}\nconsole.log(CONFIG.ready);\n`);
          });
          express.get('/assets/config.js', (_req, res) => {
            res
              .type('application/javascript')
              .send(`export const CONFIG = ${JSON.stringify({ s: ctx.clientSecret })};`);
          });
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><script type="module" src="/assets/main.js"></script>');
          return true;
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      expect(failedIds(report), `${imported}\n${formatAuditTable(report)}`).toEqual(['leak.secret']);
      expect(report.checks[0]?.evidence).toContainEqual(
        expect.stringMatching(/ in GET \/assets\/config\.js response body$/),
      );
    }
  }, 120_000);
});

describe('a module an inline script imports', () => {
  it('the client secret in a module an inline module script of the page imports fails leak.secret', async () => {
    const app = await startSampleApp({
      before: (express, ctx) => {
        express.get('/assets/config.js', (_req, res) => {
          res.type('application/javascript').send(`export const CONFIG = ${JSON.stringify({ s: ctx.clientSecret })};`);
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send(
          '<!doctype html><title>Done</title><script type="module">import { CONFIG } from "/assets/config.js"; console.log(CONFIG.ready);</script>',
        );
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
    expect(report.checks[0]?.evidence).toContainEqual(
      expect.stringMatching(/ in GET \/assets\/config\.js response body$/),
    );
  }, 120_000);
});

describe('a file a script fetches', () => {
  it("the client secret in the runtime configuration the page's script fetches fails leak.secret", async () => {
    const app = await startSampleApp({
      before: (express, ctx) => {
        express.get('/assets/main.js', (_req, res) => {
          res
            .type('application/javascript')
            .send("fetch('/api/runtime-config').then((r) => r.json()).then((c) => console.log(c.ready));\n");
        });
        express.get('/api/runtime-config', (_req, res) => {
          res.json({ ready: true, verify: { clientSecret: ctx.clientSecret } });
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send('<!doctype html><title>Done</title><script src="/assets/main.js"></script>');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
    expect(report.checks[0]?.evidence).toContainEqual(
      expect.stringMatching(/ in GET \/api\/runtime-config response body$/),
    );
  }, 120_000);
});

describe('a frame of the page', () => {
  it('the client secret in the page a frame of the success page loads (or in its script) fails leak.secret', async () => {
    for (const where of ['page', 'script'] as const) {
      const app = await startSampleApp({
        before: (express, ctx) => {
          const config = `window.SUPPORT = ${JSON.stringify({ key: ctx.clientSecret })};`;
          express.get('/support/widget', (_req, res) => {
            res.send(
              where === 'page'
                ? `<!doctype html><title>Help</title><script>${config}</script>`
                : '<!doctype html><title>Help</title><script src="/support/widget.js"></script>',
            );
          });
          express.get('/support/widget.js', (_req, res) => res.type('application/javascript').send(config));
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><p>Done.</p><iframe src="/support/widget"></iframe>');
          return true;
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      expect(failedIds(report), `${where}\n${formatAuditTable(report)}`).toEqual(['leak.secret']);
      const file = where === 'page' ? '\\/support\\/widget' : '\\/support\\/widget\\.js';
      expect(report.checks[0]?.evidence).toContainEqual(
        expect.stringMatching(new RegExp(` in GET ${file} response body$`)),
      );
    }
  }, 120_000);
});

describe('a page loading more files than the audit fetches', () => {
  it('the files past the cap are said, never left unsaid', async () => {
    const app = await startSampleApp({
      before: (express) => {
        express.get('/assets/chunk-:n.js', (req, res) => {
          res.type('application/javascript').send(`console.log(${JSON.stringify(req.params.n)});`);
        });
      },
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        const scripts = Array.from({ length: 45 }, (_, n) => `<script src="/assets/chunk-${n}.js"></script>`);
        res.send(`<!doctype html><title>Done</title>${scripts.join('')}<p>Done.</p>`);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
    expect(report.checks[0]?.evidence).toContainEqual(
      expect.stringMatching(/^\d+ file\(s\) the pages load not fetched: the audit fetches at most 40 in a run$/),
    );
  }, 120_000);
});
