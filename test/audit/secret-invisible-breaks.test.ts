/**
 * leak.secret reads a page as a browser shows it: tags removed, references and escapes decoded,
 * and without the invisible break opportunities a template puts in long tokens so they wrap (a
 * zero-width space, U+200B or `&#8203;`, or a soft hyphen, `&shy;`, every few characters). The
 * reader sees the whole secret on the screen: the check fails.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** A "break long words" helper: `mark` after every `size` characters. */
const breakable = (text: string, mark: string, size = 4) =>
  (text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? []).join(mark);

describe.concurrent('the client secret with invisible break opportunities', () => {
  for (const [name, mark] of [
    ['control: <wbr> (a tag)', '<wbr>'],
    ['a zero-width space', '\u200B'],
    ['&#8203;', '&#8203;'],
    ['a soft hyphen (&shy;)', '&shy;'],
  ] as const) {
    it(`in a page, cut by ${name}, fails leak.secret`, async () => {
      const app = await startSampleApp({
        done: (_req, res, ctx) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send(
            `<!doctype html><title>Done</title><p>Client key: <code>${breakable(ctx.clientSecret, mark)}</code></p>`,
          );
          return true;
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
    }, 90_000);
  }
});
