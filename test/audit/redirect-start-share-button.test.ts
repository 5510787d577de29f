/**
 * redirect.start passes a sound home page with a share button whose script builds a link on a fixed
 * site into a variable (`var link = 'https://twitter.com/intent/tweet?url=' +
 * encodeURIComponent(location.href)`) and opens it: only a target written as a literal where it is
 * opened was read as fixed, so this page failed though nothing redirects to a planted value.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const SHARE_JS = `document.getElementById('share').addEventListener('click', function () {
  var link = 'https://twitter.com/intent/tweet?url=' + encodeURIComponent(location.href);
  window.open(link, '_blank', 'noopener');
});
`;

describe('a home page with a share button (its script file opens a twitter.com link built from location.href)', () => {
  it('passes redirect.start', async () => {
    const app = await startSampleApp({
      before: (app) => {
        app.get('/share.js', (_req, res) => {
          res.type('application/javascript').send(SHARE_JS);
        });
        app.get('/', (_req, res) => {
          res.send(
            '<!doctype html><title>Home</title><p>Welcome.</p><button id="share">Share this page</button><script src="/share.js"></script>',
          );
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
