/**
 * The integrator's code is outside the audit's trust for liveness: its functions, what they return,
 * and the app the audit attacks. Proves that a value nothing can read (an object without a
 * prototype, which String() refuses; a revoked Proxy, which `instanceof` and
 * Object.prototype.toString refuse) fails the check or stops the run with a sentence naming the
 * integrator's function, and that an app which trickles its answer a byte at a time and never ends
 * it costs one `timeoutMs`, not the run: auditIntegration always resolves with its report.
 */
import type { NextFunction, Request, Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { watchUnhandledRejections } from '../support/unhandled.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const unhandled = watchUnhandledRejections();
const apps: SampleApp[] = [];
const drips = new Set<NodeJS.Timeout>();
afterAll(async () => {
  for (const drip of drips) clearInterval(drip);
  await Promise.all(apps.map((app) => app.close()));
});

/** A value String() and template literals refuse. */
const unreadable = () => Object.create(null) as unknown;

/** The report's outcome, or how auditIntegration rejected (which it must never do). */
async function outcomeOf(run: Promise<{ ok: boolean; stopped?: string }>) {
  return run.then(
    (report) => ({ ok: report.ok, stopped: report.stopped }),
    (error: unknown) => ({ rejected: error instanceof Error ? `${error.name}: ${error.message}` : 'non-error' }),
  );
}

describe("the audit given an integrator's function whose result or failure cannot be read", () => {
  it("signIn's csrf getter throwing an object without a prototype stops the run naming your signIn", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const outcome = await outcomeOf(
      auditIntegration({
        ...app.auditOptions,
        signIn: async () => ({
          get csrf(): string {
            throw unreadable();
          },
        }),
        timeoutMs: 2000,
      }),
    );
    expect(outcome).not.toHaveProperty('rejected');
    expect(outcome).toMatchObject({ ok: false, stopped: expect.stringMatching(/sign-in.*your signIn/) });
  }, 30_000);

  it('a probe count whose toPrimitive throws an object without a prototype fails the check, the run resolves', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const outcome = await outcomeOf(
      auditIntegration({
        ...app.auditOptions,
        probe: () =>
          ({
            [Symbol.toPrimitive]() {
              throw unreadable();
            },
          }) as unknown as number,
        timeoutMs: 2000,
        only: ['sweep.never-returns'],
      }),
    );
    expect(outcome).not.toHaveProperty('rejected');
    expect(outcome).toMatchObject({ ok: false });
  }, 30_000);

  it('sweep.run() rejecting with a revoked Proxy fails the check with a sentence naming your sweep.run()', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const report = await auditIntegration({
      ...app.auditOptions,
      sweep: { ...app.auditOptions.sweep!, run: () => Promise.reject(proxy) },
      only: ['sweep.never-returns'],
    });
    const evidence = report.checks.map((c) => c.evidence.join('\n')).join('\n');
    expect(evidence).toContain('your sweep.run() failed: a value that cannot be read');
  }, 30_000);
});

describe('the audit given a clock whose advance is asynchronous', () => {
  it('a clock.advance that rejects fails the checks that move the clock naming your clock, never an unhandled rejection', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const clock = { advance: () => Promise.reject(new Error('the clock server is gone')) };
    const report = await auditIntegration({
      ...app.auditOptions,
      clock,
      only: ['step-up.expired', 'step-up.action-start'],
    });
    const failed = report.checks.filter((c) => c.status === 'fail');
    expect(failed.map((c) => c.id).sort()).toEqual(['step-up.action-start', 'step-up.expired']);
    for (const check of failed) {
      expect(check.evidence.join('\n')).toContain('your clock.advance failed: the clock server is gone');
    }
    expect(await unhandled.settled()).toEqual([]);
  }, 60_000);

  it('a clock.advance that moves the clock once its promise settles is waited for: both checks pass', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const shared = app.auditOptions.clock!;
    const clock = {
      advance: (by: { seconds: number }) =>
        new Promise<unknown>((resolve) => setTimeout(() => resolve(shared.advance(by)), 50)),
    };
    const report = await auditIntegration({
      ...app.auditOptions,
      clock,
      only: ['step-up.expired', 'step-up.action-start'],
    });
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ['step-up.expired', 'pass'],
      ['step-up.action-start', 'pass'],
    ]);
  }, 60_000);
});

describe('the audit against an app whose start route writes a byte now and then and never ends', () => {
  it('gives up on the answer after timeoutMs and resolves with a failing report', async () => {
    const app = await startSampleApp({
      before: (express) => {
        express.post('/verify/start', (_req: Request, res: Response, _next: NextFunction) => {
          res.writeHead(200, { 'content-type': 'text/html' });
          const drip = setInterval(() => res.write(' '), 200);
          drips.add(drip);
          res.on('close', () => clearInterval(drip));
        });
      },
    });
    apps.push(app);
    const started = Date.now();
    const run = auditIntegration({ ...app.auditOptions, timeoutMs: 1000, only: ['cookie.flags'] });
    run.catch(() => {});
    const outcome = await Promise.race([
      run.then((report) => ({ stopped: report.stopped, ok: report.ok })),
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000)),
    ]);
    expect(outcome).not.toBe('still running');
    expect(outcome).toMatchObject({
      ok: false,
      stopped: expect.stringContaining('did not finish answering within 1000 ms'),
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);
});

describe("the audit given an integrator's function whose error quotes a database URL", () => {
  it('a probe or a signIn whose error quotes a URL with a password: the report (table and JSON) says the URL without it', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const password = `pw${Date.now().toString(36)}Secret`;
    const url = `postgres://app:${password}@db.internal:5432/app`;
    const probed = await auditIntegration({
      ...app.auditOptions,
      probe: () => {
        throw new Error(`could not count on ${url}`);
      },
      only: ['forged.wrong-state'],
    });
    const signedIn = await auditIntegration({
      ...app.auditOptions,
      signIn: () => Promise.reject(new Error(`no users table at ${url}`)),
    });
    for (const report of [probed, signedIn]) {
      const printed = `${formatAuditTable(report)}\n${formatAuditJson(report)}`;
      expect(printed).not.toContain(password);
      expect(printed).toContain('postgres://app:[redacted]@db.internal:5432/app');
    }
    expect(probed.checks[0]).toMatchObject({ status: 'fail' });
    expect(signedIn.stopped).toMatch(/your signIn/);
  }, 60_000);
});

describe('the audit given counts and logs in the shapes drivers give them', () => {
  it("a probe answering its count as a string (node-postgres's count(*)) is read as that count: a sound app passes", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      probe: (sessionId) => String(app.grants(sessionId)) as unknown as number,
      only: ['replay.after-success', 'forged.wrong-state'],
    });
    expect(report.ok, formatAuditTable(report)).toBe(true);
  }, 60_000);

  it('a probe answering no count (undefined, a word) fails the check with a sentence naming your probe', async () => {
    const app = await startSampleApp();
    apps.push(app);
    for (const answer of [undefined, 'many']) {
      const report = await auditIntegration({
        ...app.auditOptions,
        probe: () => answer as unknown as number,
        only: ['forged.wrong-state'],
      });
      expect(report.checks[0]?.status).toBe('fail');
      expect(report.checks[0]?.evidence.join('\n')).toMatch(/your probe\('[^']*'\) answered .*, not a count/);
    }
  }, 60_000);

  it('logs() answering the log as one text is searched line by line: the secret in it fails leak.secret', async () => {
    const app = await startSampleApp('secretInLog');
    apps.push(app);
    expect(app.logs.join('\n')).toContain('clientSecret');
    const report = await auditIntegration({
      ...app.auditOptions,
      logs: () => app.logs.join('\n') as unknown as string[],
      only: ['leak.secret'],
    });
    expect(report.checks[0]?.status).toBe('fail');
    expect(report.checks[0]?.evidence.join('\n')).toMatch(/the client secret \([^)]*\) in log line \d+ of \d+/);
  }, 60_000);

  it('logs() answering something that is not lines fails the leak checks with a sentence naming your logs()', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      logs: () => new Set(app.logs) as unknown as string[],
      only: ['leak.secret'],
    });
    expect(report.checks[0]?.status).toBe('fail');
    expect(report.checks[0]?.evidence.join('\n')).toMatch(/your logs\(\) answered .*, not the log's lines/);
  }, 60_000);
});
