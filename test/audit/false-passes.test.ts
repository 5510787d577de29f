/**
 * Mistakes the audit once passed: each test adds ONE deliberate mistake against the integration
 * rules to sample-app.ts's integrator app (written as code of the test's own), proves the mistake
 * works, then runs the audit's relevant checks and expects the check that covers it to fail. The
 * controls are mistakes it always caught.
 */
import { randomBytes } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditAgent,
  auditIntegration,
  failedIds,
  formatAuditTable,
  type ControlSession,
} from 'hosted-sms-verify-kit/testing';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const LANDING_PATH = '/verify/return';

type SessionData = { user?: string; next?: string };
const sess = (req: Request) => req.session as unknown as SessionData;
/** A query parameter given once, or '' (the flawed landings read them as careless apps do). */
const queryValue = (req: Request, name: string): string => {
  const value = req.query[name];
  return typeof value === 'string' ? value : '';
};

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

/** Runs the audit's `only` checks against the flawed app; returns the failed ids and the table. */
async function audit(
  flaw: CustomFlaw,
  only: string[],
  exploit?: (app: SampleApp) => Promise<void>,
): Promise<{ failed: string[]; table: string; app: SampleApp }> {
  const app = await startSampleApp(flaw);
  apps.push(app);
  // First: the mistake is real (the exploit works against this app).
  await exploit?.(app);
  const report = await auditIntegration({ ...app.auditOptions, only });
  return { failed: failedIds(report), table: formatAuditTable(report), app };
}

let users = 0;

/** A signed-in user of the flawed app who started one attempt (`query` on the start path), verified unless told otherwise. */
async function attempt(
  app: SampleApp,
  query = '',
  verified = true,
): Promise<{ agent: AuditAgent; session: ControlSession; startBody: string; handoff: string }> {
  const agent = new AuditAgent(app.url, () => {});
  users += 1;
  const login = await agent.postForm('/login', { user: `exploit${users}x${randomBytes(3).toString('hex')}` });
  const { csrf } = JSON.parse(login.body) as { csrf: string };
  const same = { origin: app.url, 'sec-fetch-site': 'same-origin' };
  const start = await agent.postForm(`/verify/start${query}`, { _csrf: csrf, action: 'grant' }, same);
  const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1];
  if (start.status !== 200 || handoff === undefined) throw new Error(`start answered ${start.status}`);
  const session = await app.emulator.control.sessionByHandoff(handoff);
  if (verified) await app.emulator.control.completeSession(session.sessionId, 'verified');
  return { agent, session, startBody: start.body, handoff };
}

/** GET the landing with this query (and headers). */
function land(app: SampleApp, agent: AuditAgent, query: string, headers: Record<string, string> = {}) {
  return agent.request(`${LANDING_PATH}?${query}`, { headers });
}

const q = (session: ControlSession) => new URL(session.returnLocation).search.slice(1);

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Wraps res.end so `edit` may rewrite an HTML body before it is sent. */
function rewriteBody(res: Response, edit: (body: string) => string): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const [chunk] = args;
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) {
      const body = edit(String(chunk));
      res.removeHeader('Content-Length');
      return end(body);
    }
    return end(...args);
  }) as Response['end'];
}

const FORGED = [
  'forged.unknown-session',
  'forged.foreign-session',
  'forged.wrong-state',
  'forged.missing-state',
  'forged.tampered-echo',
  'forged.unverified',
];

describe.concurrent('the audit catches: the landing', () => {
  it('a landing that trusts state and "repairs" an unknown session_id from it fails forged.unknown-session', async () => {
    // "Some mail apps mangle session_id; state is enough to find the attempt."
    const { failed, table } = await audit(
      {
        landing: (ctx) => async (req, _res, next) => {
          const sessionId = queryValue(req, 'session_id');
          const state = queryValue(req, 'state');
          if (state !== '' && (await ctx.kit.store.findAttemptBySessionId(sessionId)) === undefined) {
            const attempt = await ctx.kit.store.findAttemptByState(state);
            if (attempt !== undefined) {
              req.url = `${LANDING_PATH}?session_id=${encodeURIComponent(attempt.sessionId)}&state=${encodeURIComponent(state)}`;
            }
          }
          next();
        },
      },
      FORGED,
      async (app) => {
        // The verified attempt's state with a session_id nobody issued: fulfilled.
        const { agent, session } = await attempt(app);
        const answer = await land(app, agent, `session_id=ses_bogus&state=${encodeURIComponent(session.state)}`);
        expect(answer.status).toBe(303);
        expect(app.grants(session.sessionId)).toBe(1);
      },
    );
    expect(failed, table).toContain('forged.unknown-session');
  }, 120_000);

  it('a landing that fills in the stored state when the given one is malformed (truncated) fails forged.missing-state', async () => {
    // "In-app browsers sometimes cut the query short: recover the state from session_id."
    const { failed, table } = await audit(
      {
        landing: (ctx) => async (req, _res, next) => {
          const sessionId = queryValue(req, 'session_id');
          const state = queryValue(req, 'state');
          if (state !== '' && !/^[A-Za-z0-9_-]{43}$/.test(state)) {
            const attempt = await ctx.kit.store.findAttemptBySessionId(sessionId);
            if (attempt !== undefined) {
              req.url = `${LANDING_PATH}?session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(attempt.state)}`;
            }
          }
          next();
        },
      },
      FORGED,
      async (app) => {
        // The verified session_id with state "x": fulfilled, the state never compared.
        const { agent, session } = await attempt(app);
        const answer = await land(app, agent, `session_id=${encodeURIComponent(session.sessionId)}&state=x`);
        expect(answer.status).toBe(303);
        expect(app.grants(session.sessionId)).toBe(1);
      },
    );
    expect(failed, table).toContain('forged.missing-state');
  }, 120_000);

  it('a landing with an unknown session_id that writes a grant row for it fails forged.unknown-session', async () => {
    // "The service's webhook may be late: record the grant now, reconcile later."
    const { failed, table } = await audit(
      {
        landing: (ctx) => async (req, _res, next) => {
          const sessionId = queryValue(req, 'session_id');
          const user = sess(req).user;
          if (sessionId !== '' && user !== undefined) {
            if ((await ctx.kit.store.findAttemptBySessionId(sessionId)) === undefined) {
              ctx.insert(sessionId, userNamed(user).userRef);
            }
          }
          next();
        },
      },
      ['forged.unknown-session', 'landing.pages'],
      async (app) => {
        const { agent } = await attempt(app);
        const answer = await land(app, agent, 'session_id=ses_bogus&state=x');
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(app.grants('ses_bogus')).toBe(1); // a bad session_id wrote a grant row
      },
    );
    expect(failed, table).toContain('forged.unknown-session');
  }, 120_000);
});

describe.concurrent('the audit catches: the pages after a landing', () => {
  it('a success page that refreshes to a "thanks" page granting the session_id in its URL fails landing.pages', async () => {
    const { failed, table } = await audit(
      {
        before: (app, ctx) => {
          // "Just in case the landing missed it": grants whatever attempt the URL names.
          app.get('/thanks', async (req, res) => {
            const attempt = await ctx.kit.store.findAttemptBySessionId(queryValue(req, 'session_id'));
            if (attempt !== undefined && ctx.grants(attempt.sessionId) === 0)
              ctx.insert(attempt.sessionId, attempt.userRef);
            res.setHeader('Cache-Control', 'no-store');
            res.send('<!doctype html><title>Thanks</title><p>Thanks.</p>');
          });
        },
        done: (req, res) => {
          // The landing's URL, read from the Referer, names the attempt.
          const referer = req.get('referer');
          const sessionId = referer === undefined ? null : new URL(referer).searchParams.get('session_id');
          if (sessionId === null) return false;
          res.setHeader('Cache-Control', 'no-store');
          const thanks = `/thanks?session_id=${encodeURIComponent(sessionId)}`;
          res.send(
            `<!doctype html><meta http-equiv="refresh" content="0;url=${escapeHtml(thanks)}"><title>Done</title>`,
          );
          return true;
        },
      },
      ['landing.pages'],
    );
    expect(failed, table).toEqual(['landing.pages']);
    expect(table).toMatch(/the pending attempt has 1 effect\(s\)/);
  }, 120_000);
});

describe.concurrent('the audit catches: redirects', () => {
  it('a success page that sends the user on with <meta http-equiv=refresh> to a remembered ?next= fails redirect.start', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.post('/verify/start', (req, _res, next) => {
            if (typeof req.query.next === 'string') sess(req).next = req.query.next;
            next();
          });
        },
        done: (req, res) => {
          const next = sess(req).next;
          if (next === undefined) return false;
          delete sess(req).next;
          res.setHeader('Cache-Control', 'no-store');
          res.send(`<!doctype html><meta http-equiv="refresh" content="0;url=${escapeHtml(next)}"><title>Done</title>`);
          return true;
        },
      },
      ['redirect.start'],
      async (app) => {
        const { agent, session } = await attempt(app, `?next=${encodeURIComponent('https://evil.example/x')}`);
        const landing = await land(app, agent, q(session));
        expect(landing.location).toBe('/done');
        const done = await agent.request('/done');
        expect(done.body).toContain('http-equiv="refresh" content="0;url=https://evil.example/x"');
      },
    );
    expect(failed, table).toContain('redirect.start');
  }, 120_000);

  it('the same refresh written without quotes (<meta http-equiv=refresh content=0;url=...>, as browsers obey it) fails redirect.start', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.post('/verify/start', (req, _res, next) => {
            if (typeof req.query.next === 'string') sess(req).next = req.query.next;
            next();
          });
        },
        done: (req, res) => {
          const next = sess(req).next;
          if (next === undefined) return false;
          delete sess(req).next;
          res.setHeader('Cache-Control', 'no-store');
          res.send(`<!doctype html><meta http-equiv=refresh content=0;url=${escapeHtml(next)}><title>Done</title>`);
          return true;
        },
      },
      ['redirect.start'],
    );
    expect(failed, table).toContain('redirect.start');
  }, 120_000);

  it('a success page that sends the user on by script (location.replace) to a remembered ?next= fails redirect.start', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.post('/verify/start', (req, _res, next) => {
            if (typeof req.query.next === 'string') sess(req).next = req.query.next;
            next();
          });
        },
        done: (req, res) => {
          const next = sess(req).next;
          if (next === undefined) return false;
          delete sess(req).next;
          res.setHeader('Cache-Control', 'no-store');
          // JSON in a script, its "<" escaped, as a careful template writes a value there.
          const target = JSON.stringify(next).replace(/</g, '\\u003c').replace(/\//g, '\\/');
          res.send(`<!doctype html><title>Done</title><script>location.replace(${target});</script>`);
          return true;
        },
      },
      ['redirect.start'],
      async (app) => {
        const { agent, session } = await attempt(app, `?next=${encodeURIComponent('https://evil.example/x')}`);
        await land(app, agent, q(session));
        const done = await agent.request('/done');
        expect(done.status).toBe(200);
        expect(done.body).toContain('location.replace("https:\\/\\/evil.example\\/x")');
      },
    );
    expect(failed, table).toContain('redirect.start');
    expect(table).toMatch(/a <script> of the page carries a planted value/);
  }, 120_000);

  it('a success page whose "Continue" link to a remembered ?next= a script clicks for the user fails redirect.start', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.post('/verify/start', (req, _res, next) => {
            if (typeof req.query.next === 'string') sess(req).next = req.query.next;
            next();
          });
        },
        done: (req, res) => {
          const next = sess(req).next;
          if (next === undefined) return false;
          delete sess(req).next;
          res.setHeader('Cache-Control', 'no-store');
          res.send(
            `<!doctype html><title>Done</title><a id=go href="${escapeHtml(next)}">Continue</a>` +
              '<script>document.getElementById("go").click();</script>',
          );
          return true;
        },
      },
      ['redirect.start'],
    );
    expect(failed, table).toContain('redirect.start');
    expect(table).toMatch(/a <a href> of the page carries a planted value/);
  }, 120_000);

  it('a start that remembers a "local" ?next= (starts with / but not //) fails redirect.start: /\\evil.example is an open redirect', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.post('/verify/start', (req, _res, next) => {
            const wanted = req.query.next;
            if (typeof wanted === 'string' && wanted.startsWith('/') && !wanted.startsWith('//')) {
              sess(req).next = wanted;
            }
            next();
          });
        },
        done: (req, res) => {
          const next = sess(req).next;
          if (next === undefined) return false;
          delete sess(req).next;
          res.redirect(next);
          return true;
        },
      },
      ['redirect.start'],
      async (app) => {
        const { agent, session } = await attempt(app, `?next=${encodeURIComponent('/\\evil.example/x')}`);
        await land(app, agent, q(session));
        const done = await agent.request('/done');
        expect(done.status).toBe(302);
        // A browser resolves "/\evil.example/x" as "//evil.example/x".
        expect(new URL(done.location!, app.url).host).toBe('evil.example');
      },
    );
    expect(failed, table).toContain('redirect.start');
  }, 120_000);

  it('a landing that honours ?next= when it "starts with our origin" fails redirect.landing (origin@evil.example)', async () => {
    const { failed, table } = await audit(
      {
        landing: (ctx) => (req, res, next) => {
          const wanted = req.query.next;
          if (typeof wanted === 'string' && wanted.startsWith(ctx.url)) {
            const location = res.location.bind(res);
            res.location = () => location(wanted);
          }
          next();
        },
      },
      ['redirect.landing'],
      async (app) => {
        const { agent, session } = await attempt(app);
        const answer = await land(app, agent, `${q(session)}&next=${encodeURIComponent(`${app.url}@evil.example/x`)}`);
        expect(new URL(answer.location!, app.url).host).toBe('evil.example');
      },
    );
    expect(failed, table).toContain('redirect.landing');
  }, 120_000);

  it('a landing that builds its absolute redirect from X-Forwarded-Host fails redirect.landing', async () => {
    // "Absolute Locations for our mobile web view": host from the (trusted-loopback) proxy header.
    const { failed, table } = await audit(
      {
        landing: () => (req, res, next) => {
          const location = res.location.bind(res);
          res.location = (path: string) =>
            location(
              path.startsWith('/')
                ? `${req.protocol}://${req.get('x-forwarded-host') ?? req.get('host')}${path}`
                : path,
            );
          next();
        },
      },
      ['redirect.landing'],
      async (app) => {
        const { agent, session } = await attempt(app);
        const answer = await land(app, agent, q(session), { 'x-forwarded-host': 'evil.example' });
        expect(new URL(answer.location!, app.url).host).toBe('evil.example');
      },
    );
    expect(failed, table).toContain('redirect.landing');
  }, 120_000);

  it('a landing that honours ?redirect_to= fails redirect.landing', async () => {
    const { failed, table } = await audit(
      {
        landing: () => (req, res, next) => {
          const wanted = req.query.redirect_to;
          if (typeof wanted === 'string') {
            const location = res.location.bind(res);
            res.location = () => location(wanted);
          }
          next();
        },
      },
      ['redirect.landing'],
      async (app) => {
        const { agent, session } = await attempt(app);
        const answer = await land(
          app,
          agent,
          `${q(session)}&redirect_to=${encodeURIComponent('https://evil.example/x')}`,
        );
        expect(answer.location).toBe('https://evil.example/x');
      },
    );
    expect(failed, table).toContain('redirect.landing');
  }, 120_000);

  it.each(['redirect_url', 'return_url', 'next_url', 'nextUrl'])(
    'a landing that honours ?%s= fails redirect.landing',
    async (name) => {
      const { failed, table } = await audit(
        {
          landing: () => (req, res, next) => {
            const wanted = req.query[name];
            if (typeof wanted === 'string') {
              const location = res.location.bind(res);
              res.location = () => location(wanted);
            }
            next();
          },
        },
        ['redirect.landing'],
        async (app) => {
          const { agent, session } = await attempt(app);
          const answer = await land(
            app,
            agent,
            `${q(session)}&${name}=${encodeURIComponent('https://evil.example/x')}`,
          );
          expect(answer.location).toBe('https://evil.example/x');
        },
      );
      expect(failed, table).toContain('redirect.landing');
    },
    120_000,
  );
});

describe.concurrent('the audit catches: the return after a step-up', () => {
  it('a guarded page that, once opened, sends the user on with <meta http-equiv=refresh> to its ?next= fails step-up.redirect', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          // "After the check, take the user where they were going."
          app.get('/account', (req, res, next) => {
            const wanted = queryValue(req, 'next');
            if (wanted !== '') {
              rewriteBody(res, (body) =>
                body.replace(
                  '<title>Account</title>',
                  `<meta http-equiv="refresh" content="0;url=${escapeHtml(wanted)}"><title>Account</title>`,
                ),
              );
            }
            next();
          });
        },
      },
      ['step-up.redirect'],
    );
    expect(failed, table).toEqual(['step-up.redirect']);
    expect(table).toMatch(
      /after the landing, hop 2: a refresh to https:\/\/evil\.example\/audit leaves the app's origin/,
    );
  }, 120_000);

  it('a guarded page that, once opened, sends the user on by an onload handler to its ?next= fails step-up.redirect', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.get('/account', (req, res, next) => {
            const wanted = queryValue(req, 'next');
            if (wanted !== '') {
              rewriteBody(res, (body) =>
                body.replace(
                  '<title>Account</title>',
                  `<title>Account</title><body onload="location.href='${escapeHtml(wanted)}'">`,
                ),
              );
            }
            next();
          });
        },
      },
      ['step-up.redirect'],
    );
    expect(failed, table).toEqual(['step-up.redirect']);
    expect(table).toMatch(/after the landing, hop 2: .*an onload handler of the page carries a planted value/);
  }, 120_000);
});

describe.concurrent('the audit catches: a guarded page that does not ask', () => {
  // "Soft expiry": once the account opened, the session remembers it; later visits show it with a
  // banner inviting the user to confirm again, instead of the guard's page.
  const banners: [string, string][] = [
    ['nothing (the mistake alone, which the check always caught)', ''],
    [
      "the app's own form (Remix style: a hidden action, a button named intent)",
      '<form method="post" action="/account/renew"><input type="hidden" name="action" value="see_account"><button name="intent" value="renew">Confirm it’s you again</button></form>',
    ],
    [
      "the kit's start route with the scope but an intent of the app's own",
      '<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="CSRF"><input type="hidden" name="action" value="see_account"><input type="hidden" name="intent" value="renew"><button>Confirm it’s you again</button></form>',
    ],
  ];
  it.each(banners)(
    'a guarded page that, once opened, stays open past maxAge with a "confirm again" banner holding %s fails step-up.expired',
    async (_what, banner) => {
      const { failed, table } = await audit(
        {
          before: (app, ctx) => {
            app.get('/account', (req, res, next) => {
              const remembered = req.session as unknown as { accountSeen?: boolean };
              if (remembered.accountSeen === true) {
                res.setHeader('Cache-Control', 'no-store');
                res.send(
                  `<!doctype html><title>Account</title><p>Your account.</p>${banner.replace('CSRF', ctx.kit.csrfToken(req))}`,
                );
                return;
              }
              rewriteBody(res, (body) => {
                if (body.includes('<title>Account</title>')) remembered.accountSeen = true;
                return body;
              });
              next();
            });
          },
        },
        ['step-up.expired'],
      );
      expect(failed, table).toEqual(['step-up.expired']);
      expect(table).toMatch(/s after the grant, GET \/account \(scope see_account\) opened: \/account answered 200/);
    },
    120_000,
  );
});

describe.concurrent('the audit catches: framing', () => {
  it('kit pages whose Content-Security-Policy allows any frame-ancestors, X-Frame-Options DENY kept, fail headers.kit-pages', async () => {
    // A browser obeys frame-ancestors and ignores X-Frame-Options when a policy has that directive.
    const { failed, table } = await audit(
      {
        before: (app) => {
          // "Our help widget embeds every page."
          app.use((_req, res, next) => {
            const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
            res.writeHead = ((...args: unknown[]) => {
              res.setHeader('Content-Security-Policy', "default-src 'self'; frame-ancestors *");
              return writeHead(...args);
            }) as Response['writeHead'];
            next();
          });
        },
      },
      ['headers.kit-pages'],
      async (app) => {
        const { agent } = await attempt(app);
        const page = await agent.request('/verify/return?session_id=x&state=y');
        expect(page.headers['x-frame-options']).toBe('DENY');
        expect(page.headers['content-security-policy']).toBe("default-src 'self'; frame-ancestors *");
      },
    );
    expect(failed, table).toEqual(['headers.kit-pages']);
    expect(table).toMatch(/may be framed/);
  }, 120_000);
});

describe.concurrent('the audit catches: the handoff and the secret', () => {
  it('a handoff page with a <noscript> GET link carrying the handoff in its URL fails leak.handoff', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.post('/verify/start', (_req, res, next) => {
            rewriteBody(res, (body) => {
              const action = /<form id="verify-kit-handoff" method="post" action="([^"]*)">/.exec(body)?.[1];
              const hx = /<input type="hidden" name="hx" value="([^"]*)">/.exec(body)?.[1];
              if (action === undefined || hx === undefined) return body;
              // "Without JavaScript the form never submits: give them a link."
              return body.replace('</form>', `</form><noscript><a href="${action}?hx=${hx}">Continue</a></noscript>`);
            });
            next();
          });
        },
      },
      ['leak.handoff'],
      async (app) => {
        const { startBody, handoff } = await attempt(app, '', false);
        expect(startBody).toMatch(new RegExp(`<a href="[^"]*\\?hx=${handoff}">`));
      },
    );
    expect(failed, table).toContain('leak.handoff');
  }, 120_000);

  it('the client secret hex-encoded in a page fails leak.secret', async () => {
    const { failed, table } = await audit(
      {
        done: (_req, res, ctx) => {
          res.setHeader('Cache-Control', 'no-store');
          const hex = Buffer.from(ctx.clientSecret).toString('hex');
          res.send(`<!doctype html><title>Done</title><meta name="client" content="${hex}"><p>Done.</p>`);
          return true;
        },
      },
      ['leak.secret'],
      async (app) => {
        const done = await new AuditAgent(app.url, () => {}).request('/done');
        expect(Buffer.from(/content="([0-9a-f]+)"/.exec(done.body)![1]!, 'hex').toString()).toBe(app.clientSecret);
      },
    );
    expect(failed, table).toContain('leak.secret');
  }, 120_000);

  it('Basic credentials (base64 of id:secret) percent-encoded in a page link fail leak.secret', async () => {
    // A secret whose base64 spellings hold "+" and "/" (which percent-encoding changes).
    const secret = 'review-???~~~???~~~-secret-???~~~???';
    const { failed, table } = await audit(
      {
        secret,
        done: (_req, res, ctx) => {
          res.setHeader('Cache-Control', 'no-store');
          const basic = Buffer.from(`${ctx.clientId}:${ctx.clientSecret}`).toString('base64');
          res.send(
            `<!doctype html><title>Done</title><a href="/support?auth=${encodeURIComponent(`Basic ${basic}`)}">Support</a>`,
          );
          return true;
        },
      },
      ['leak.secret'],
      async (app) => {
        const done = await new AuditAgent(app.url, () => {}).request('/done');
        const auth = decodeURIComponent(/auth=([^"]+)"/.exec(done.body)![1]!);
        expect(Buffer.from(auth.replace('Basic ', ''), 'base64').toString()).toBe(
          `${app.clientId}:${app.clientSecret}`,
        );
      },
    );
    expect(failed, table).toContain('leak.secret');
  }, 120_000);
});

/**
 * A flaw whose success page is `page(typed)`: the number the user typed into change_phone's start,
 * remembered in the session ("so the success page can say which number was added"), escaped.
 */
function showingTypedNumber(page: (typed: string) => string): CustomFlaw {
  return {
    before: (app) => {
      app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
        const { action, phone } = req.body as Record<string, unknown>;
        if (action === 'change_phone' && typeof phone === 'string') (req.session as { typed?: string }).typed = phone;
        next();
      });
    },
    done: (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.send(page((req.session as { typed?: string }).typed ?? ''));
      return true;
    },
  };
}

describe.concurrent('the audit catches: a typed number', () => {
  it('a success page holding the number form that also says the typed number in full outside it fails entered.number-masked', async () => {
    const { failed, table } = await audit(
      showingTypedNumber((typed) => {
        return (
          `<!doctype html><title>Done</title><p>Your number is now ${escapeHtml(typed)}.</p>` +
          '<form method="post" action="/verify/start"><input name="action" type="hidden" value="change_phone">' +
          '<label>New number <input name="phone"></label><button>Change it again</button></form>'
        );
      }),
      ['entered.number-masked'],
    );
    expect(failed, table).toEqual(['entered.number-masked']);
    expect(table).toMatch(/a typed number in full in GET \/done response body \(200\)/);
  }, 120_000);

  it('an old number form left in an HTML comment, still filled with the typed number, fails entered.number-masked: a comment holds no form', async () => {
    const { failed, table } = await audit(
      showingTypedNumber((typed) => {
        // The page's source carries the number in full, though no browser shows or submits that form.
        return (
          `<!doctype html><title>Done</title><p>Your number was changed.</p>` +
          `<!-- old form: <form method="post" action="/verify/start"><input name="phone" value="${escapeHtml(typed)}"></form> -->` +
          '<form method="post" action="/verify/start"><input name="action" type="hidden" value="change_phone">' +
          '<label>New number <input name="phone"></label><button>Change it again</button></form>'
        );
      }),
      ['entered.number-masked'],
    );
    expect(failed, table).toEqual(['entered.number-masked']);
    expect(table).toMatch(/a typed number in full in GET \/done response body \(200\)/);
  }, 120_000);

  it('a number form written with single quotes or none, showing the typed number back in its field, passes entered.number-masked', async () => {
    const { failed, table } = await audit(
      showingTypedNumber((typed) => {
        // The number shown back only in the number form's own field, as a template writes it.
        return (
          `<!doctype html><title>Done</title><p>Your number was changed.</p>` +
          "<form method=post action='/verify/start'><input name=action type=hidden value=change_phone>" +
          `<label>New number <input name=phone value='${escapeHtml(typed)}'></label><button>Change it again</button></form>`
        );
      }),
      ['entered.number-masked'],
    );
    expect(failed, table).toEqual([]);
  }, 120_000);

  it('a number form whose phone field sits outside the form element (joined with form=), showing the typed number back there, passes entered.number-masked', async () => {
    const { failed, table } = await audit(
      showingTypedNumber((typed) => {
        // A layout puts the field in a table cell apart from its form: a browser still submits it with that form.
        return (
          `<!doctype html><title>Done</title><p>Your number was changed.</p>` +
          '<form id=number method=post action=/verify/start><input name=action type=hidden value=change_phone><button>Change it again</button></form>' +
          `<table><tr><td><label>New number <input name=phone form=number value="${escapeHtml(typed)}"></label></td></tr></table>`
        );
      }),
      ['entered.number-masked'],
    );
    expect(failed, table).toEqual([]);
  }, 120_000);
});

describe.concurrent('the audit passes: a start form built as a browser builds it', () => {
  it('a home page whose start form takes its _csrf from an input outside it (joined with form=) passes the checks that start a verification', async () => {
    const app = await startSampleApp({
      before: (express5, ctx) => {
        express5.get('/', (req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          // A layout puts the token in a footer apart from its form: a browser still submits it with that form.
          res.send(
            '<!doctype html><title>Home</title>' +
              '<form id=start method=post action=/verify/start><input type=hidden name=action value=grant><button>Verify</button></form>' +
              `<footer><input type=hidden name=_csrf form=start value="${escapeHtml(ctx.kit.csrfToken(req))}"></footer>`,
          );
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      signIn: { path: '/', action: '/login', fields: (user) => ({ user }), csrfFrom: '/' },
      only: ['csrf.no-token', 'replay.after-success'],
    });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});

describe.concurrent('the audit catches: the sign-in', () => {
  it('a sign-in that gives the browser a new session but signs the one it came with in too ("other tabs stay signed in") fails session.fixation, though the cookie changed', async () => {
    const same = (url: string) => ({ origin: url, 'sec-fetch-site': 'same-origin' });
    const { failed, table } = await audit(
      {
        before: (app, ctx) => {
          app.post('/login', express.urlencoded({ extended: false }), (req, res, next) => {
            const user = String((req.body as { user?: unknown }).user);
            const cameWith = req.sessionID;
            req.session.regenerate((error) => {
              if (error) return next(error);
              sess(req).user = user;
              const csrf = ctx.kit.csrfToken(req);
              // The mistake: the session id the browser came with is signed in as this user too.
              const copy = { cookie: req.session.cookie, user, verifyKitCsrf: csrf };
              req.sessionStore.set(cameWith, copy as unknown as typeof req.session, (stored) => {
                if (stored) return next(stored);
                res.setHeader('Cache-Control', 'no-store');
                res.json({ csrf });
              });
            });
          });
        },
      },
      ['session.fixation'],
      async (app) => {
        // The mistake is real: the victim's sign-in replaced the planted cookie, yet the attacker's
        // browser, holding only that cookie, starts a verification as the victim.
        const attacker = new AuditAgent(app.url, () => {});
        await attacker.postForm('/login', { user: `attacker${randomBytes(3).toString('hex')}` });
        const planted = attacker.jar.heldFor(new URL(app.url));
        const victim = new AuditAgent(app.url, () => {});
        victim.jar.plant(planted);
        const login = await victim.postForm('/login', { user: `victim${randomBytes(3).toString('hex')}` });
        const { csrf } = JSON.parse(login.body) as { csrf: string };
        const sid = (cookies: { name: string; value: string }[]) => cookies.find((c) => c.name === 'sample.sid')?.value;
        expect(sid(victim.jar.heldFor(new URL(app.url)))).not.toBe(sid(planted));
        const start = await attacker.postForm('/verify/start', { _csrf: csrf, action: 'grant' }, same(app.url));
        const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1] ?? '';
        const session = await app.emulator.control.sessionByHandoff(handoff);
        const victimStart = await victim.postForm('/verify/start', { _csrf: csrf, action: 'grant' }, same(app.url));
        const victimHandoff = /name="hx" value="([^"]*)"/.exec(victimStart.body)?.[1] ?? '';
        expect(session.userRef).toBe((await app.emulator.control.sessionByHandoff(victimHandoff)).userRef);
      },
    );
    expect(failed, table).toEqual(['session.fixation']);
  }, 120_000);

  it('a home page that opens a session before sign-in, and a sign-in (refused to a browser already signed in) that signs that session in, fails session.fixation', async () => {
    const same = (url: string) => ({ origin: url, 'sec-fetch-site': 'same-origin' });
    const { failed, table } = await audit(
      {
        before: (app, ctx) => {
          app.get('/', (req, res) => {
            // "Remember the visitor's language": a session before anyone signs in.
            (req.session as unknown as { language?: string }).language = 'en';
            res.setHeader('Cache-Control', 'no-store');
            res.type('html').send('<!doctype html><title>Home</title><h1>Welcome</h1>');
          });
          app.post('/login', express.urlencoded({ extended: false }), (req, res) => {
            // Like the demo, a browser already signed in is not signed in again.
            if (sess(req).user !== undefined) {
              res.status(403).json({ error: 'signed_in' });
              return;
            }
            sess(req).user = String((req.body as { user?: unknown }).user);
            res.setHeader('Cache-Control', 'no-store');
            res.json({ csrf: ctx.kit.csrfToken(req) });
          });
        },
      },
      ['session.fixation'],
      async (app) => {
        // The mistake is real: the cookie the home page gave the attacker's browser is the victim's
        // signed-in session once she signs in with it.
        const origin = new URL(app.url).origin;
        const attacker = new AuditAgent(app.url, () => {});
        await attacker.request('/');
        const victim = new AuditAgent(app.url, () => {});
        victim.jar.plant(attacker.jar.heldFor(new URL(origin)));
        const login = await victim.postForm('/login', { user: `victim${randomBytes(3).toString('hex')}` });
        const { csrf } = JSON.parse(login.body) as { csrf: string };
        const start = await attacker.postForm('/verify/start', { _csrf: csrf, action: 'grant' }, same(app.url));
        expect(start.body).toContain('verify-kit-handoff');
      },
    );
    expect(failed, table).toEqual(['session.fixation']);
  }, 120_000);
});

describe.concurrent('the audit catches: the sign-in, with a cookie on the home page', () => {
  it('a home page that sets a cookie of its own (a language), and a sign-in that keeps the session the browser came with, fails session.fixation', async () => {
    const same = (url: string) => ({ origin: url, 'sec-fetch-site': 'same-origin' });
    const { failed, table } = await audit(
      {
        before: (app, ctx) => {
          app.get('/', (_req, res) => {
            // "Remember the visitor's language": a cookie of its own, no session before sign-in.
            res.cookie('lang', 'en', { httpOnly: true, sameSite: 'lax' });
            res.setHeader('Cache-Control', 'no-store');
            res.type('html').send('<!doctype html><title>Home</title><h1>Welcome</h1>');
          });
          app.post('/login', express.urlencoded({ extended: false }), (req, res) => {
            // The mistake: the user is set on the session the browser came with (no regenerate).
            sess(req).user = String((req.body as { user?: unknown }).user);
            res.setHeader('Cache-Control', 'no-store');
            res.json({ csrf: ctx.kit.csrfToken(req) });
          });
        },
      },
      ['session.fixation'],
      async (app) => {
        // The mistake is real: the attacker's own signed-in cookie, planted in the victim's
        // browser, is the victim's signed-in session once she signs in with it.
        const origin = new URL(app.url).origin;
        const attacker = new AuditAgent(app.url, () => {});
        await attacker.postForm('/login', { user: `attacker${randomBytes(3).toString('hex')}` });
        const victim = new AuditAgent(app.url, () => {});
        victim.jar.plant(attacker.jar.heldFor(new URL(origin)));
        const login = await victim.postForm('/login', { user: `victim${randomBytes(3).toString('hex')}` });
        const { csrf } = JSON.parse(login.body) as { csrf: string };
        const start = await attacker.postForm('/verify/start', { _csrf: csrf, action: 'grant' }, same(app.url));
        const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1] ?? '';
        const victimStart = await victim.postForm('/verify/start', { _csrf: csrf, action: 'grant' }, same(app.url));
        const victimHandoff = /name="hx" value="([^"]*)"/.exec(victimStart.body)?.[1] ?? '';
        const control = app.emulator.control;
        expect((await control.sessionByHandoff(handoff)).userRef).toBe(
          (await control.sessionByHandoff(victimHandoff)).userRef,
        );
      },
    );
    expect(failed, table).toEqual(['session.fixation']);
  }, 120_000);
});

/** Controls: mistakes the audit caught before these (they must stay caught). */
describe.concurrent('controls: mistakes the audit catches', () => {
  it('a start that re-serves the same handoff page for 60 s (one session, one state for several attempts) fails some check', async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          const cache = new Map<string, { at: number; body: string }>();
          app.post('/verify/start', (req, res, next) => {
            const user = sess(req).user;
            const hit = user === undefined ? undefined : cache.get(user);
            if (hit !== undefined && Date.now() - hit.at < 60_000) {
              res.setHeader('Cache-Control', 'no-store');
              res.type('html').send(hit.body);
              return;
            }
            rewriteBody(res, (body) => {
              if (user !== undefined && body.includes('verify-kit-handoff')) cache.set(user, { at: Date.now(), body });
              return body;
            });
            next();
          });
        },
      },
      ['stale-intent', 'forged.tampered-echo', 'forged.unverified'],
    );
    expect(failed, table).not.toEqual([]);
  }, 120_000);

  it('a landing that grants check-then-insert outside the kit transaction fails replay.storm', async () => {
    const { failed, table } = await audit(
      {
        noFulfilEffect: true,
        landing: (ctx) => async (req, res, next) => {
          const sessionId = queryValue(req, 'session_id');
          const user = sess(req).user;
          const attempt = await ctx.kit.store.findAttemptBySessionId(sessionId);
          // "Not granted yet?" read before the kit runs; the grant written once the kit redirected to /done.
          if (attempt !== undefined && user !== undefined && ctx.grants(sessionId) === 0) {
            res.on('finish', () => {
              if (res.statusCode === 303 && res.getHeader('location') === '/done')
                ctx.insert(sessionId, attempt.userRef);
            });
          }
          next();
        },
      },
      ['replay.storm', 'replay.after-success'],
    );
    expect(failed, table).toContain('replay.storm');
  }, 120_000);

  it("a start answer with Cache-Control 'private, max-age=600' fails headers.kit-pages", async () => {
    const { failed, table } = await audit(
      {
        before: (app) => {
          app.post('/verify/start', (_req, res, next) => {
            const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
            res.writeHead = ((...args: unknown[]) => {
              res.setHeader('Cache-Control', 'private, max-age=600');
              return writeHead(...args);
            }) as Response['writeHead'];
            next();
          });
        },
      },
      ['headers.kit-pages'],
    );
    expect(failed, table).toContain('headers.kit-pages');
  }, 120_000);

  it('the first 16 characters of the client secret in the app\'s log ("masked" as a hint) fail leak.secret', async () => {
    const { failed, table } = await audit(
      {
        before: (_app, ctx) => {
          // "Which secret is loaded? Its start is enough to tell."
          ctx.logs.push(
            JSON.stringify({ level: 'info', msg: 'config', clientSecret: `${ctx.clientSecret.slice(0, 16)}…` }),
          );
        },
      },
      ['leak.secret'],
    );
    expect(failed, table).toContain('leak.secret');
  }, 120_000);

  it('the client secret split across two lines of a page fails leak.secret', async () => {
    const { failed, table } = await audit(
      {
        done: (_req, res, ctx) => {
          res.setHeader('Cache-Control', 'no-store');
          const half = Math.ceil(ctx.clientSecret.length / 2);
          const [head, tail] = [ctx.clientSecret.slice(0, half), ctx.clientSecret.slice(half)];
          res.send(`<!doctype html><title>Done</title><pre>client secret:\n${head}\n${tail}</pre>`);
          return true;
        },
      },
      ['leak.secret'],
    );
    expect(failed, table).toContain('leak.secret');
  }, 120_000);

  it('the client secret in a script the success page loads (/assets/config.js) fails leak.secret', async () => {
    const { failed, table } = await audit(
      {
        before: (app, ctx) => {
          // "The front end needs the config too": the server's settings bundled into a script.
          app.get('/assets/config.js', (_req, res) => {
            const config = { clientId: ctx.clientId, clientSecret: ctx.clientSecret };
            res.type('application/javascript').send(`window.CONFIG = ${JSON.stringify(config)};`);
          });
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><script src="/assets/config.js"></script><p>Done.</p>');
          return true;
        },
      },
      ['leak.secret'],
      async (app) => {
        const config = await new AuditAgent(app.url, () => {}).request('/assets/config.js');
        expect(config.body).toContain(JSON.stringify(app.clientSecret));
      },
    );
    expect(failed, table).toContain('leak.secret');
    expect(table).toMatch(/GET \/assets\/config\.js response body/);
  }, 120_000);

  it('the client secret in the source map of a script the success page loads fails leak.secret', async () => {
    const { failed, table } = await audit(
      {
        before: (app, ctx) => {
          app.get('/assets/app.js', (_req, res) => {
            res.type('application/javascript').send('console.log("ready");\n//# sourceMappingURL=app.js.map\n');
          });
          // The map's sourcesContent keeps the server file the bundle was built beside.
          app.get('/assets/app.js.map', (_req, res) => {
            const source = `export const clientSecret = ${JSON.stringify(ctx.clientSecret)};`;
            res.json({ version: 3, sources: ['config.ts'], sourcesContent: [source], mappings: '' });
          });
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><script type="module" src="assets/app.js"></script>');
          return true;
        },
      },
      ['leak.secret'],
    );
    expect(failed, table).toContain('leak.secret');
    expect(table).toMatch(/GET \/assets\/app\.js\.map response body/);
  }, 120_000);

  it('the client secret in base64 (no padding, inside a longer value) in a page fails leak.secret', async () => {
    const { failed, table } = await audit(
      {
        done: (_req, res, ctx) => {
          res.setHeader('Cache-Control', 'no-store');
          const b64 = Buffer.from(`cfg:${ctx.clientSecret}:end`).toString('base64url');
          res.send(`<!doctype html><title>Done</title><meta name="c" content="${b64}">`);
          return true;
        },
      },
      ['leak.secret'],
    );
    expect(failed, table).toContain('leak.secret');
  }, 120_000);
});
