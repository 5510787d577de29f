/**
 * The audit reads a body as a browser decodes it: in the encoding its byte order mark or its
 * Content-Type's charset names. A success page served as UTF-16 showing the client secret puts
 * it on every visitor's screen, and fails leak.secret as the same page in UTF-8 does.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a page in UTF-16', () => {
  it('control: the same page in UTF-8 fails leak.secret', async () => {
    const app = await startSampleApp({
      done: (_req, res, ctx) => {
        res.setHeader('Cache-Control', 'no-store');
        res.send(`<!doctype html><title>Done</title><p>Client: ${ctx.clientSecret}</p>`);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
  }, 90_000);

  it('showing the client secret fails leak.secret', async () => {
    const app = await startSampleApp({
      done: (_req, res, ctx) => {
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Content-Type', 'text/html; charset=utf-16le');
        // A legacy template engine writing UTF-16, with its BOM, as browsers decode it.
        const page = `\uFEFF<!doctype html><title>Done</title><p>Client: ${ctx.clientSecret}</p>`;
        res.end(Buffer.from(page, 'utf16le'));
        return true;
      },
    });
    apps.push(app);
    // The mistake is real: decoded as its Content-Type names (as a browser does), the page shows the secret.
    const done = await new AuditAgent(app.url, () => {}).request('/done');
    expect(done.headers['content-type']).toMatch(/utf-16le/);
    expect(new TextDecoder('utf-16le').decode(await rawBody(app.url))).toContain(app.clientSecret);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['leak.secret']);
  }, 90_000);
});

async function rawBody(url: string): Promise<Uint8Array> {
  const answer = await fetch(`${url}/done`);
  return new Uint8Array(await answer.arrayBuffer());
}
