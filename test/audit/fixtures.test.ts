/**
 * The audit can fail: each flaw of the sample integrator app fails exactly the checks that cover
 * it and no others, and the same app without a flaw passes every check.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  auditIntegration,
  failedIds,
  formatAuditJson,
  formatAuditTable,
  type AuditReport,
} from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type Flaw, type SampleApp } from './sample-app.ts';

/** The flaw, and the checks that cover it. */
export const EXPECTED: [Flaw | 'none', string[]][] = [
  ['none', []],
  ['fulfilsOnArrival', ['forged.tampered-echo', 'forged.unverified', 'stale-intent', 'sweep.never-returns']],
  ['skipsStateCheck', ['forged.foreign-session', 'forged.wrong-state', 'forged.missing-state']],
  ['nextRedirect', ['redirect.landing']],
  ['secretInQuery', ['leak.secret']],
  ['noStartLimits', ['limits.burst', 'limits.forwarded-ip']],
  ['looseCookie', ['cookie.flags']],
  ['grantsOnRedirect', ['replay.after-success', 'replay.storm', 'sweep.never-returns']],
  ['stripsOrigin', ['csrf.cross-site', 'csrf.foreign-origin']],
  ['logsResponses', ['leak.handoff']],
  ['fillsMissingToken', ['csrf.no-token']],
  ['cacheEverything', ['headers.kit-pages']],
  ['remembersNext', ['redirect.start']],
  ['thanksElsewhere', ['redirect.landing', 'redirect.start']],
  ['hopsToNext', ['redirect.start']],
  ['bodyNext', ['redirect.start']],
  ['remembersAnyNext', ['redirect.start', 'redirect.landing']],
  ['successGrantsBySessionId', ['landing.pages']],
  ['successGrantsLatest', ['landing.pages']],
  ['getStartLink', ['csrf.methods']],
  ['anyMethodStarts', ['csrf.methods']],
  ['trustsAnyProxy', ['limits.forwarded-ip']],
  ['readsRealIp', ['limits.forwarded-ip']],
  ['readsForwarded', ['limits.forwarded-ip']],
  ['unknownLandsLatest', ['forged.unknown-session']],
  ['landingSignsIn', ['replay.other-browser']],
  ['secretInPage', ['leak.secret']],
  ['secretInLog', ['leak.secret']],
  ['secretInHeader', ['leak.secret']],
];

/** The secret as it could leak: as is, URL-encoded, HTML- and JSON-escaped, in base64 alone and as Basic credentials. */
function spellings(app: SampleApp): string[] {
  const secret = app.clientSecret;
  const html = secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  return [
    secret,
    encodeURIComponent(secret),
    html,
    JSON.stringify(secret).slice(1, -1),
    Buffer.from(secret).toString('base64'),
    Buffer.from(`sample-client:${secret}`).toString('base64'),
  ];
}

/** Every 16 characters of any spelling of the secret found in the table or the JSON report (none expected). */
function secretIn(report: AuditReport, app: SampleApp): string[] {
  const out = `${formatAuditTable(report)}\n${formatAuditJson(report)}`;
  return spellings(app).flatMap((form) =>
    Array.from({ length: form.length - 15 }, (_, i) => form.slice(i, i + 16)).filter((piece) => out.includes(piece)),
  );
}

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe.concurrent('the sample app, flaw by flaw', () => {
  for (const [flaw, expected] of EXPECTED) {
    it(`${flaw}: fails exactly ${expected.length === 0 ? 'nothing' : expected.join(', ')}`, async () => {
      const app = await startSampleApp(flaw === 'none' ? undefined : flaw);
      apps.push(app);
      const report = await auditIntegration(app.auditOptions);
      expect(failedIds(report).sort(), formatAuditTable(report)).toEqual([...expected].sort());
      // The audit's own output never quotes the secret, and its tour never left the app's origin.
      expect(secretIn(report, app)).toEqual([]);
      expect(app.elsewhereRequests).toEqual([]);
    }, 120_000);
  }
});

describe('leak.secret says where the secret is, never the text', () => {
  const where: [Flaw, RegExp][] = [
    ['secretInQuery', /^the client secret \(as is\) in GET \/done \(URL\)$/m],
    ['secretInPage', /^the client secret \(HTML-escaped\) in GET \/done response body$/m],
    ['secretInLog', /^the client secret \(JSON-escaped\) in log line 1 of \d+$/m],
    ['secretInHeader', /^the client secret \(base64\) in GET \/\S* response header x-debug-client$/m],
  ];
  for (const [flaw, line] of where) {
    it(`${flaw}: ${line.source}`, async () => {
      const app = await startSampleApp(flaw);
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      const evidence = report.checks[0]!.evidence.join('\n');
      expect(evidence).toMatch(line);
      expect(secretIn(report, app)).toEqual([]);
    }, 120_000);
  }
});

describe("without a probe: effects counted through the kit's read API", () => {
  const readApi = (app: SampleApp) => ({ ...app.auditOptions, probe: undefined, kit: app.kit });

  it('skipsStateCheck fails its three checks and no other (the kit marks the forged fulfilment)', async () => {
    const app = await startSampleApp('skipsStateCheck');
    apps.push(app);
    const report = await auditIntegration(readApi(app));
    expect(report.counting).toBe('read-api');
    expect(failedIds(report).sort()).toEqual(['forged.foreign-session', 'forged.missing-state', 'forged.wrong-state']);
  }, 120_000);
});

describe('options', () => {
  it('every problem is listed in one error that says how to fix the call, before any request', async () => {
    const call = auditIntegration({ appUrl: 'localhost:3000', actions: [] } as never);
    await expect(call).rejects.toThrow(/7 problem\(s\)/);
    await expect(call).rejects.toThrow('`appUrl` must be your app');
    await expect(call).rejects.toThrow('Pass `probe`');
  });
});
