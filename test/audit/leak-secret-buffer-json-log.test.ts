/**
 * leak.secret fails an app whose log writes the client secret byte by byte: a config logged as JSON
 * while the secret is a Buffer (`{"type":"Buffer","data":[115,107,…]}`: JSON.stringify, pino), or a
 * JSON logger writing ASCII only with every character a `\u` escape. Before the fix both passed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

// A secret a portal issues: 32 characters.
const SECRET = 'sk_live_4f9a1c7e2b8d6f3a0c5e9b1d';

const everyCharacterEscaped = (text: string) =>
  text
    .split('')
    .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');

describe('the client secret logged byte by byte', () => {
  it.each([
    [
      'a Buffer as JSON',
      (secret: string) => JSON.stringify({ level: 'info', msg: 'config', clientSecret: Buffer.from(secret) }),
    ],
    [
      'every character a \\u escape',
      (secret: string) => `{"level":"info","msg":"config","clientSecret":"${everyCharacterEscaped(secret)}"}`,
    ],
  ])(
    '%s: fails leak.secret',
    async (_how, logged) => {
      const app = await startSampleApp({
        secret: SECRET,
        before: (_app, ctx) => {
          ctx.logs.push(logged(ctx.clientSecret));
        },
      });
      apps.push(app);
      // The mistake is real: the line reads back as the secret.
      const line = app.logs.find((l) => l.includes('"config"')) ?? '';
      const { clientSecret } = JSON.parse(line) as { clientSecret: string | { data: number[] } };
      expect(typeof clientSecret === 'string' ? clientSecret : Buffer.from(clientSecret.data).toString()).toBe(SECRET);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
    },
    120_000,
  );
});
