/**
 * leak.handoff searches each handoff in every spelling leak.secret searches the secret in: a
 * handoff written in base64 (a serverless adapter's log of response bodies, a "continue on your
 * phone" link whose `c=` is the base64 of a JSON context) is as good as the handoff to whoever
 * reads it, and fails.
 */
import type { Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const HX = /name="hx" value="([^"]*)"/;

/** Calls `seen(body)` with each answer's text as it is sent. */
function onBody(res: Response, seen: (body: string) => string | undefined): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const [chunk] = args;
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) {
      const edited = seen(String(chunk));
      if (edited !== undefined) {
        res.removeHeader('Content-Length');
        return end(edited);
      }
    }
    return end(...args);
  }) as Response['end'];
}

describe('a handoff in base64', () => {
  it('in a log line (a serverless adapter logs response bodies as base64) fails leak.handoff', async () => {
    const app = await startSampleApp({
      before: (express, ctx) => {
        express.use((req, res, next) => {
          onBody(res, (body) => {
            ctx.logs.push(
              JSON.stringify({
                level: 'debug',
                path: req.path,
                isBase64Encoded: true,
                body: Buffer.from(body).toString('base64'),
              }),
            );
            return undefined;
          });
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.handoff'] });
    // The mistake is real: a log line decodes to a page carrying a handoff the audit was handed.
    const decoded = app.logs.map((line) => {
      const body = (JSON.parse(line) as { body?: string }).body;
      return body === undefined ? '' : Buffer.from(body, 'base64').toString('utf8');
    });
    expect(decoded.some((text) => HX.test(text))).toBe(true);
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.handoff']);
  }, 90_000);

  it('in a "continue on your phone" link on the start page fails leak.handoff', async () => {
    let linked = 0;
    const app = await startSampleApp({
      before: (express) => {
        express.use((req, res, next) => {
          if (req.method === 'POST' && req.path === '/verify/start') {
            onBody(res, (body) => {
              const hx = HX.exec(body)?.[1];
              if (hx === undefined) return undefined;
              const c = Buffer.from(JSON.stringify({ hx })).toString('base64url');
              if (body.includes('</body>')) linked += 1;
              return body.replace('</body>', `<p><a href="/phone?c=${c}">Continue on your phone</a></p></body>`);
            });
          }
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.handoff'] });
    // The mistake is real: start pages the audit read carried the link.
    expect(linked).toBeGreaterThan(0);
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.handoff']);
  }, 90_000);
});
