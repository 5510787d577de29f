/**
 * The audit can fail: each flaw of the sample integrator app fails exactly the checks that cover
 * it and no others, and the same app without a flaw passes every check.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type Flaw, type SampleApp } from './sample-app.ts';

/** The flaw, and the checks that cover it. */
export const EXPECTED: [Flaw | 'none', string[]][] = [
  ['none', []],
  ['fulfilsOnArrival', ['forged.tampered-echo', 'forged.unverified', 'stale-intent', 'sweep.never-returns']],
  ['skipsStateCheck', ['forged.foreign-session', 'forged.wrong-state', 'forged.missing-state']],
  ['nextRedirect', ['redirect.landing']],
  ['secretInQuery', ['leak.secret']],
  ['noStartLimits', ['limits.burst']],
  ['looseCookie', ['cookie.flags']],
  ['grantsOnRedirect', ['replay.after-success', 'replay.storm', 'sweep.never-returns']],
  ['stripsOrigin', ['csrf.cross-site', 'csrf.foreign-origin']],
  ['logsResponses', ['leak.handoff']],
  ['fillsMissingToken', ['csrf.no-token']],
  ['cacheEverything', ['headers.kit-pages']],
  ['remembersNext', ['redirect.start']],
];

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
