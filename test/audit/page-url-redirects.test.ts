/**
 * A redirect by a page's own script reading the URL it was opened at: a landing page, or a guarded
 * page after a step-up, whose script does `location = new URLSearchParams(location.search).get('next')`
 * sends the browser to a planted ?next= though no text of the app carries it, and fails the
 * redirect checks; a page reading its URL for something else (its language) does not.
 */
import type { NextFunction, Request, Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function audit(flaw: CustomFlaw, only: string[]) {
  const app = await startSampleApp(flaw);
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only });
  return { failed: failedIds(report), table: formatAuditTable(report) };
}

const page = (body: string) => `<!doctype html><title>Taking you back</title>${body}<p>One moment.</p>`;

/** A landing with more than the service's parameters shows `html` instead of the kit's landing. */
const landingPage =
  (html: string) =>
  () =>
  (req: Request, res: Response, next: NextFunction): void => {
    const extra = Object.keys(req.query).some((name) => name !== 'session_id' && name !== 'state');
    if (!extra) return next();
    res.setHeader('Cache-Control', 'no-store');
    res.send(page(html));
  };

describe("a page whose own script sends the browser on to a parameter of the page's URL", () => {
  it('a landing page whose inline script sets location to its ?next= fails redirect.landing, naming what it reads', async () => {
    const script = "<script>location = new URLSearchParams(location.search).get('next') || '/';</script>";
    const { failed, table } = await audit({ landing: landingPage(script) }, ['redirect.landing']);
    expect(failed, table).toEqual(['redirect.landing']);
    expect(table).toMatch(
      /a <script> of the page reads its URL, which carries a planted value \(its parameter next\), and sends the browser on/,
    );
  }, 120_000);

  it("a landing page loading /assets/back.js, which replaces location with the page's ?returnTo=, fails redirect.landing", async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.get('/assets/back.js', (_req, res) => {
            res.type('application/javascript');
            res.send(
              "const back = new URL(location.href).searchParams.get('returnTo');\nif (back) location.replace(back);",
            );
          });
        },
        landing: landingPage('<script src="/assets/back.js"></script>'),
      },
      ['redirect.landing'],
    );
    expect(failed, table).toEqual(['redirect.landing']);
    expect(table).toMatch(
      /the script \/assets\/back\.js the page loads reads a URL carrying a planted value \(its parameter returnTo\)/,
    );
  }, 120_000);

  it('a guarded page whose script sends the user on to its ?next= after the step-up fails step-up.redirect', async () => {
    const script =
      "<script>const to = new URLSearchParams(location.search).get('next'); if (to) location.assign(to);</script>";
    const { failed, table } = await audit(
      {
        before: (app) => {
          // "After the check, take the user where they were going", in the account page's script.
          app.get('/account', (_req, res, next) => {
            const send = res.send.bind(res);
            res.send = (body: unknown) =>
              send(typeof body === 'string' ? body.replace('</title>', `</title>${script}`) : body);
            next();
          });
        },
      },
      ['step-up.redirect'],
    );
    expect(failed, table).toEqual(['step-up.redirect']);
    expect(table).toMatch(
      /after the landing, hop 2: a <script> of the page reads its URL, which carries a planted value/,
    );
  }, 120_000);
});

describe('a sound page reading its own URL for something else', () => {
  it.each([
    // Read by name: the page's ?lang=, none of the planted parameters, builds where it goes.
    [
      'reads ?lang= by name',
      "const lang = new URLSearchParams(location.search).get('lang') || 'en'; location.replace('/' + lang + '/done');",
    ],
    // Read as text (no parameter named), but it goes to a fixed path.
    [
      'reads its query as text and goes to a fixed path',
      "if (location.search.indexOf('lang=fr') >= 0) location.href = '/fr/done';",
    ],
  ])(
    'a landing page whose script %s fails none of the redirect checks',
    async (_, code) => {
      const { failed, table } = await audit({ landing: landingPage(`<script>${code}</script>`) }, [
        'redirect.start',
        'redirect.landing',
      ]);
      expect(failed, table).toEqual([]);
    },
    120_000,
  );
});

describe("a page whose event handler attribute sends the browser on to a parameter of the page's URL", () => {
  it.each([
    [
      'body onload handler',
      `<body onload="location = new URLSearchParams(location.search).get('next') || '/'">`,
      'onload',
    ],
    // Written with entities, as a template escaping the attribute writes it.
    [
      "link's onclick handler",
      '<a href="/" onclick="location.href = new URLSearchParams(location.search).get(&quot;next&quot;) || &#39;/&#39;; return false">Continue</a>',
      'onclick',
    ],
  ])(
    'a landing page whose %s sets location to its ?next= fails redirect.landing, naming the handler',
    async (_, html, name) => {
      const { failed, table } = await audit({ landing: landingPage(html) }, ['redirect.landing']);
      expect(failed, table).toEqual(['redirect.landing']);
      expect(table).toContain(
        `an ${name} handler of the page reads its URL, which carries a planted value (its parameter next), and sends the browser on`,
      );
    },
    120_000,
  );

  it('a sound landing page whose onclick goes to a fixed path, beside an onload reading ?lang=, fails none of the redirect checks', async () => {
    const html =
      `<body onload="document.title = new URLSearchParams(location.search).get('lang') || 'Done'">` +
      `<a href="/account" onclick="location.href = '/account'; return false">Your account</a>`;
    const { failed, table } = await audit({ landing: landingPage(html) }, ['redirect.start', 'redirect.landing']);
    expect(failed, table).toEqual([]);
  }, 120_000);
});

describe("a page whose javascript: URL sends the browser on to a parameter of the page's URL", () => {
  it.each([
    [
      '<a href>',
      `<a href="javascript:location=new URLSearchParams(location.search).get('next')">Continue</a>`,
      'a javascript: URL in <a href>',
    ],
    // Percent-encoded and written with entities: the browser decodes both before it runs the code.
    [
      '<form action>',
      '<form method=post action="javascript:location.replace(new%20URLSearchParams(location.search).get(&quot;next&quot;))"><button>Go</button></form>',
      'a javascript: URL in <form action>',
    ],
    [
      '<button formaction>',
      `<form method=post action="/done"><button formaction="javascript:location.href=new URL(location).searchParams.get('next')">Go</button></form>`,
      'a javascript: URL in <button formaction>',
    ],
    [
      '<iframe src>',
      `<iframe src="javascript:top.location=new URLSearchParams(parent.location.search).get('next')"></iframe>`,
      'a javascript: URL in <iframe src>',
    ],
  ])(
    'a landing page whose %s runs code setting location to its ?next= fails redirect.landing, naming it',
    async (_, html, by) => {
      const { failed, table } = await audit({ landing: landingPage(html) }, ['redirect.landing']);
      expect(failed, table).toEqual(['redirect.landing']);
      expect(table).toContain(
        `${by} of the page reads its URL, which carries a planted value (its parameter next), and sends the browser on`,
      );
    },
    120_000,
  );

  it('a sound landing page whose links run javascript:void(0) and javascript:history.back() fails none of the redirect checks', async () => {
    const html =
      '<a href="javascript:void(0)" onclick="return false">Menu</a> <a href="javascript:history.back()">Back</a>';
    const { failed, table } = await audit({ landing: landingPage(html) }, ['redirect.start', 'redirect.landing']);
    expect(failed, table).toEqual([]);
  }, 120_000);
});
