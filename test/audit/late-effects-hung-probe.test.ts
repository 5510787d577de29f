/**
 * The effects counted again at the end of the run go through your probe too: a probe that hangs
 * by then fails the check whose count it held, once, within `timeoutMs`, and the run ends; it is
 * not waited for once per attempt.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const only = ['forged.unverified', 'landing.pages', 'replay.after-success', 'replay.storm', 'stale-intent'];

describe('a probe that hangs once the checks are done', () => {
  it('fails one check saying so, and the run ends within a few timeouts', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const probe = app.auditOptions.probe!;
    // The calls a run makes before its count again: the same checks make as many each run.
    let calls = 0;
    await auditIntegration({ ...app.auditOptions, only, probe: (id) => ((calls += 1), probe(id)) });
    const before = calls - 9;
    let made = 0;
    const timeoutMs = 300;
    const started = Date.now();
    const report = await auditIntegration({
      ...app.auditOptions,
      only,
      timeoutMs,
      probe: (id) => ((made += 1), made > before ? new Promise<number>(() => {}) : probe(id)),
    });
    const elapsed = Date.now() - started;
    const table = formatAuditTable(report);
    const said = table.match(/effects again at the end of the run failed: your probe\('[^']*'\) did not answer/g) ?? [];
    expect(said.length, table).toBe(1);
    expect(elapsed, table).toBeLessThan(timeoutMs * 4 + 3_000);
  }, 120_000);
});
