/**
 * The audit reads an answer as a browser does: a body the app compresses whatever the request
 * accepts (`Content-Encoding: gzip`, `deflate` or `br`: a pre-compressed bundle served as is) is
 * decompressed first, so a client secret or a typed number inside it is found; decompressed, it is
 * bounded as any answer is, so a small body that inflates without end never holds the audit.
 */
import { createServer } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { closeServer, listen } from '../support/listen.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const compressors = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;

describe('answers compressed whatever the request accepts', () => {
  it.each(Object.keys(compressors) as (keyof typeof compressors)[])(
    'fails leak.secret for a success page whose bundle, served %s-encoded, holds the secret',
    async (encoding) => {
      const app = await startSampleApp({
        before: (express, ctx) => {
          // "Serve the pre-built, pre-compressed bundle": every browser accepts it anyway.
          const bundle = compressors[encoding](
            `window.CONFIG = { clientSecret: ${JSON.stringify(ctx.clientSecret)} };`,
          );
          express.get('/app.js', (_req, res) => {
            res.set({ 'Content-Type': 'text/javascript', 'Content-Encoding': encoding });
            res.end(bundle);
          });
        },
        done: (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><script src="/app.js"></script><p>Done.</p>');
          return true;
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual(['leak.secret']);
      expect(table).toMatch(/the client secret \(as is\) in GET \/app\.js response body/);
      expect(table).not.toContain(app.clientSecret.slice(0, 8));
      // Read as the browser reads it: the bundle's text.
      expect((await new AuditAgent(app.url, () => {}).request('/app.js')).body).toContain(app.clientSecret);
    },
    60_000,
  );

  it('stops reading a body that inflates past the bound the audit reads, saying so', async () => {
    // A quarter of a megabyte of gzip that inflates to 256 MB: the answer is small, what it spells is not.
    const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const url = `http://127.0.0.1:${await listen(server, { host: '127.0.0.1' })}`;
    try {
      const started = Date.now();
      const asked = new AuditAgent(url, () => {}, 10_000).request('/');
      await expect(asked).rejects.toThrow(/GET .* answered more than 4 MB; the audit reads no more of one answer/);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await closeServer(server);
    }
  }, 30_000);
});
