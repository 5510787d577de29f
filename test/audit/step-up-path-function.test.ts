/**
 * A guarded route's `path` given as a function of n is held to the rule a path given as a string is
 * held to: a path on the app starting with one "/". A function answering undefined had the audit
 * request /undefined and report that page's answer as the route's, and one answering another host
 * (`//cdn.example/...`) sent the audit's browsers off the app and left the check "not run"; each now
 * fails the check with one sentence naming the function and what it answered.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function stepUpExpired(app: SampleApp, path: (n: number) => string) {
  const report = await auditIntegration({
    ...app.auditOptions,
    stepUp: [{ path, scope: 'see_account', maxAge: 600 }],
    only: ['step-up.expired'],
  });
  const [check] = report.checks;
  return { status: check?.status, evidence: check?.evidence ?? [], table: formatAuditTable(report) };
}

describe('a guarded route whose path is a function of n', () => {
  it.each([
    ['undefined', () => undefined as unknown as string, 'undefined'],
    ['a number', () => 42 as unknown as string, '42'],
    ['another host', () => '//cdn.example/account', 'a string not starting with one "/"'],
  ])(
    'answering %s fails the check, saying what your path(n) answered',
    async (_name, path, said) => {
      const app = await startSampleApp();
      apps.push(app);
      const { status, evidence, table } = await stepUpExpired(app, path);
      expect(status, table).toBe('fail');
      expect(evidence, table).toContain(
        `the check could not run: your stepUp path(1) answered ${said}, not a path on your app (e.g. '/payees/1')`,
      );
    },
    60_000,
  );

  it("answering the route's path opens it after the real flow: the check passes", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const { status, table } = await stepUpExpired(app, () => '/account');
    expect(status, table).toBe('pass');
  }, 60_000);
});
