/**
 * leak.secret fails an app that logs its configuration with util.inspect (console.log's
 * formatting) while the client secret is held as a Buffer (read with fs.readFileSync from a
 * mounted secret file, as Kubernetes and Docker secrets are): Node prints `<Buffer 73 61 6d 70 …>`,
 * the secret's bytes in hex, space-separated, which the check reads as one of its spellings.
 */
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from '../audit/sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

describe('the client secret logged as a Buffer by util.inspect', () => {
  it('fails leak.secret', async () => {
    const app = await startSampleApp({
      // A secret a portal issues: 32 characters.
      secret: 'sk_live_4f9a1c7e2b8d6f3a0c5e9b1d',
      before: (_a, ctx) => {
        // console.log('config', config) at startup; the secret as read from /run/secrets/verify_secret.
        ctx.logs.push(
          `config ${inspect({ clientId: ctx.clientId, clientSecret: Buffer.from(ctx.clientSecret) }, { breakLength: Infinity })}`,
        );
      },
    });
    apps.push(app);
    // The flaw is real: the secret's bytes are in the log, readable.
    const line = app.logs.find((l) => l.startsWith('config')) ?? '';
    const hexBytes = /<Buffer ([0-9a-f ]+)>/.exec(line)?.[1] ?? '';
    expect(Buffer.from(hexBytes.replaceAll(' ', ''), 'hex').toString()).toBe(app.clientSecret);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
  }, 120_000);

  it('control: the same secret logged as hex in one run fails leak.secret (the search works)', async () => {
    const app = await startSampleApp({
      secret: 'sk_live_4f9a1c7e2b8d6f3a0c5e9b1d',
      before: (_a, ctx) => {
        ctx.logs.push(`config ${Buffer.from(ctx.clientSecret).toString('hex')}`);
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
  }, 120_000);

  it('control: the sound sample app passes leak.secret', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
