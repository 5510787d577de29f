/**
 * A body compressed twice (`Content-Encoding: gzip, br`: a pre-compressed bundle the app's
 * compression middleware compresses again) is read by a browser through both, in reverse order.
 * The audit read such a body as it came, compressed, and the secret inside went unseen: leak.secret
 * passed. A coding the audit cannot read (zstd, which browsers read) stops its request, saying so.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The success page loads /app.js, served with `encoding`, its bytes `encode(text)`. */
function appServing(encoding: string, encode: (text: string) => Buffer) {
  return startSampleApp({
    before: (express, ctx) => {
      const bundle = encode(`window.CONFIG = { clientSecret: ${JSON.stringify(ctx.clientSecret)} };`);
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
}

describe('a body compressed twice', () => {
  for (const [encoding, encode] of [
    ['gzip, br', (text: string) => brotliCompressSync(gzipSync(text))],
    ['gzip, gzip', (text: string) => gzipSync(gzipSync(text))],
  ] as const) {
    it(`${encoding}: leak.secret finds the secret in it`, async () => {
      const app = await appServing(encoding, encode);
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual(['leak.secret']);
      expect(table).toMatch(/the client secret \(as is\) in GET \/app\.js response body/);
    }, 60_000);
  }

  it('zstd, which the audit cannot read: the body is not searched as text, and leak.secret says so', async () => {
    const app = await appServing('zstd', (text) => Buffer.from(`(zstd frame) ${text.length}`));
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(report.checks[0]?.evidence.join('\n')).toMatch(
      /a file a page loads was not searched: GET \S*\/app\.js answered a body in a Content-Encoding the audit cannot read \(zstd\)/,
    );
  }, 60_000);
});
