/**
 * The audit never harms the app it tests: it spends no real user's start budget (a second run right
 * after the first passes, and a user on 127.0.0.1 can still start), it stops before any start when
 * the app's kit calls a service other than the emulator it was given (no session anywhere), and an integrator's function that
 * hangs or throws fails its check with one sentence instead of stalling the run.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditAgent,
  auditIntegration,
  failedIds,
  formatAuditJson,
  formatAuditTable,
  startEmulator,
  type RunningEmulator,
} from 'hosted-sms-verify-kit/testing';
import { startDemoTarget, type DemoTarget } from './demo-target.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';
import { freePort } from '../support/listen.ts';

const apps: SampleApp[] = [];
const others: RunningEmulator[] = [];
let demo: DemoTarget | undefined;
afterAll(async () => {
  await Promise.all([...apps.map((app) => app.close()), ...others.map((e) => e.close()), demo?.close()]);
});

/** Alice, a seeded demo user, signs in and starts "confirm your phone" from 127.0.0.1 as a browser would. */
async function startAsAlice(appUrl: string): Promise<{ status: number; handedOff: boolean }> {
  const agent = new AuditAgent(appUrl, () => {});
  const form = await agent.request('/signin');
  const token = /name="_csrf" value="([^"]*)"/.exec(form.body)?.[1] ?? '';
  const same = { origin: new URL(appUrl).origin, 'sec-fetch-site': 'same-origin' };
  await agent.postForm('/signin', { _csrf: token, userId: 'usr_alice' }, same);
  const home = await agent.request('/');
  const csrf = /action="\/verify\/start"[\s\S]*?name="_csrf" value="([^"]*)"/.exec(home.body)?.[1] ?? '';
  const answer = await agent.postForm('/verify/start', { _csrf: csrf, action: 'confirm_phone' }, same);
  return { status: answer.status, handedOff: answer.body.includes('id="verify-kit-handoff"') };
}

describe('the audit spends no real start budget', () => {
  it('two runs back to back against the demo with its default limits both pass every check, and a user on 127.0.0.1 can start afterwards', async () => {
    demo = await startDemoTarget();
    const first = await auditIntegration(demo.options);
    expect(failedIds(first), formatAuditTable(first)).toEqual([]);
    const second = await auditIntegration(demo.options);
    expect(failedIds(second), formatAuditTable(second)).toEqual([]);
    expect(await startAsAlice(demo.options.appUrl)).toEqual({ status: 200, handedOff: true });
  }, 600_000);
});

describe('the audit confirms where the app texts before anything else', () => {
  it("pointed at an emulator other than the one the app's kit calls, it stops before any start: no session anywhere", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const wrong = await startEmulator({ port: 0, log: () => {} });
    others.push(wrong);
    const report = await auditIntegration({ ...app.auditOptions, emulatorUrl: wrong.url });
    expect(report.ok).toBe(false);
    expect(report.checks.every((c) => c.status === 'not-run' && c.evidence[0]!.startsWith('not run'))).toBe(true);
    // Neither the service the app's kit calls nor the emulator given saw a session or sent a text.
    const real = await app.emulator.control.stats();
    expect([real.creates, real.smsSent]).toEqual([0, 0]);
    expect((await wrong.control.stats()).creates).toBe(0);
    expect(report.stopped).toMatch(
      /your app's kit calls the service at http:\/\/127\.0\.0\.1:\d+, not the emulator at/,
    );
  }, 60_000);

  it('without the kit or its serviceUrl, it stops before any start and says what to pass', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const { kit: _kit, ...withoutKit } = app.auditOptions;
    const report = await auditIntegration(withoutKit);
    expect(report.stopped).toMatch(/pass `kit` \(your app's kit\) or `serviceUrl`/);
    expect((await app.emulator.control.stats()).creates).toBe(0);
    const given = await auditIntegration({ ...withoutKit, serviceUrl: app.emulator.url, only: ['cookie.flags'] });
    expect(given.stopped).toBeUndefined();
  }, 60_000);

  it('a serviceUrl or emulatorUrl with a password in it is reported without the password (table and JSON)', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const { kit: _kit, ...withoutKit } = app.auditOptions;
    const password = `proxy-pw-${Date.now().toString(36)}`;
    const serviceUrl = `https://shop:${password}@verify.example.com/v1`;
    const miswired = await auditIntegration({ ...withoutKit, serviceUrl, only: ['cookie.flags'] });
    expect(miswired.stopped).toMatch(
      /your app's kit calls the service at https:\/\/shop:\[redacted\]@verify\.example\.com/,
    );
    const unreachable = await auditIntegration({
      ...withoutKit,
      serviceUrl,
      emulatorUrl: `http://shop:${password}@127.0.0.1:1`,
      only: ['cookie.flags'],
    });
    expect(unreachable.stopped).toMatch(/control API at http:\/\/shop:\[redacted\]@127\.0\.0\.1:1 /);
    for (const report of [miswired, unreachable]) {
      const printed = `${formatAuditTable(report)}\n${formatAuditJson(report)}`;
      expect(printed).not.toContain('proxy-pw-');
    }
  }, 60_000);

  it('an emulator whose control API does not answer stops the run before the app is asked anything', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, emulatorUrl: `http://127.0.0.1:${await freePort()}` });
    expect(report.stopped).toMatch(/control API at .* did not answer/);
    expect((await app.emulator.control.stats()).creates).toBe(0);
  }, 60_000);
});

describe("an integrator's function that hangs or throws fails its check, never the run", () => {
  it('a probe that never answers fails the checks that count effects, within the deadline', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const started = Date.now();
    const report = await auditIntegration({
      ...app.auditOptions,
      probe: () => new Promise<number>(() => {}),
      timeoutMs: 1000,
      only: ['replay.after-success', 'cookie.flags'],
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(failedIds(report)).toEqual(['replay.after-success']);
    expect(report.checks[0]!.evidence.join('\n')).toMatch(/your probe\('[^']+'\) did not answer within 1000 ms/);
  }, 60_000);

  it('logs() and sweep.run() that throw fail their checks with one sentence and no stack', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      logs: () => {
        throw new Error('log store offline');
      },
      sweep: { ...app.auditOptions.sweep!, run: () => Promise.reject(new Error('no sweep today')) },
      only: ['leak.secret', 'sweep.never-returns'],
    });
    const evidence = report.checks.map((c) => c.evidence.join('\n')).join('\n');
    expect(failedIds(report).sort()).toEqual(['leak.secret', 'sweep.never-returns']);
    expect(evidence).toContain('your logs() failed: log store offline');
    expect(evidence).toContain('your sweep.run() failed: no sweep today');
    expect(evidence).not.toMatch(/\n\s+at /);
  }, 60_000);

  it("an error of yours quoting another error's stack fails its check in one line, the stack left out", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const cause = new Error('connection reset');
    const report = await auditIntegration({
      ...app.auditOptions,
      logs: () => {
        throw new Error(`log store offline\n${cause.stack ?? ''}`);
      },
      only: ['leak.secret'],
    });
    const evidence = report.checks.flatMap((c) => c.evidence);
    expect(evidence.join('\n')).toContain('your logs() failed: log store offline Error: connection reset');
    for (const line of evidence) {
      expect(line).not.toMatch(/[\n\r]/);
      expect(line).not.toMatch(/\bat .*:\d+:\d+/);
    }
  }, 60_000);

  it('a sign-in that never answers stops the run with the reason', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      signIn: () => new Promise(() => {}),
      timeoutMs: 1000,
    });
    expect(report.stopped).toMatch(/your signIn\(agent, '[^']+'\) did not answer within 3000 ms/);
  }, 60_000);

  it("an action's fields() that returns a promise which rejects fails its checks, and nothing reaches the process", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const fields = (() => Promise.reject(new Error('no payee today'))) as unknown as (
        n: number,
      ) => Record<string, string>;
      const report = await auditIntegration({
        ...app.auditOptions,
        actions: [{ name: 'grant', fields }],
        only: ['forged.wrong-state'],
      });
      // A rejection nobody handled is reported on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      expect(report.checks[0]!.evidence.join('\n')).toContain('your fields(1) of action grant returned a promise');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 60_000);
});
