/**
 * The audit passes sound apps written the ways integrators write theirs: a check that fails a
 * sound integration teaches its owner to ignore the audit.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startIntegratorApp, type IntegratorChoices } from './integrator-app.ts';
import { startSampleApp } from './sample-app.ts';

const apps: { close: () => Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function audit(choices: IntegratorChoices) {
  const app = await startIntegratorApp(choices);
  apps.push(app);
  const report = await auditIntegration(app.auditOptions);
  return { report, table: formatAuditTable(report) };
}

const SOUND: [string, IntegratorChoices][] = [
  ['the start form posting to a full URL of the app', { formAction: 'absolute' }],
  ['the start form posting to a path relative to its page', { formAction: 'relative' }],
  ["the app's pages and the kit's routes under /account, the kit's router at '/'", { prefix: '/account' }],
  ["errors: 'next' with the app's own error page", { errorsNext: true }],
  ["a rolling session, SameSite Strict, 'trust proxy' 1", { strictRollingSession: true, trustProxy: 1 }],
  ['sign-in through a JSON API', { jsonSignIn: true }],
];

describe.concurrent('a sound app', () => {
  for (const [name, choices] of SOUND) {
    it(`${name}: runs every check it was given and fails none`, async () => {
      const { report, table } = await audit(choices);
      expect(report.stopped, table).toBeUndefined();
      expect(failedIds(report), table).toEqual([]);
    }, 120_000);
  }
});

// A change of phone number is the action the recipes guard with a step-up on the action itself: an
// app whose only action is one such is audited through the grant a user gets first, not stopped.
describe('an app whose only action requires a step-up', () => {
  it('is audited: every check that starts the action gets the grant first, and none fails', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      actions: [{ name: 'close_account', requireRecentVerification: { scope: 'account_closing', maxAge: 600 } }],
    });
    const table = formatAuditTable(report);
    expect(report.stopped, table).toBeUndefined();
    expect(failedIds(report), table).toEqual([]);
    expect(report.checks.find((c) => c.id === 'replay.storm')?.status, table).toBe('pass');
  }, 120_000);
});

// Which cookie is the session cannot be guessed (a script-readable "remember me" credential would
// pass): a language cookie set on the way to the sign-in is held to the session's flags, until the
// app names its session cookie; the failure says how.
describe('a language cookie beside the session cookie', () => {
  it('fails cookie.flags, naming sessionCookie as the way to check only the session', async () => {
    const app = await startIntegratorApp({ languageCookie: true });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['cookie.flags'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['cookie.flags']);
    expect(table).toMatch(/lang is not HttpOnly/);
    expect(table).toMatch(
      /checked every cookie the sign-in and the verification set \(.*lang.*\); give `sessionCookie` to check only your session's/,
    );
  }, 120_000);

  it('passes cookie.flags once the app names its session cookie', async () => {
    const app = await startIntegratorApp({ languageCookie: true });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, sessionCookie: 'app.sid', only: ['cookie.flags'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
    expect(table).not.toMatch(/give `sessionCookie`/);
  }, 120_000);
});

// A Set-Cookie that deletes a cookie (an expiry in the past) leaves the browser nothing to protect:
// its flags are no cookie's.
describe('a sign-in that clears cookies before setting the session', () => {
  it('passes cookie.flags, with every cookie checked and with sessionCookie naming the session', async () => {
    const app = await startIntegratorApp({ clearsCookiesOnSignIn: true });
    apps.push(app);
    for (const sessionCookie of [undefined, 'app.sid']) {
      const report = await auditIntegration({
        ...app.auditOptions,
        ...(sessionCookie === undefined ? {} : { sessionCookie }),
        only: ['cookie.flags'],
      });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual([]);
      expect(report.checks[0]?.evidence.join('\n')).toMatch(/app\.sid: HttpOnly true, Secure true, SameSite lax/);
    }
  }, 120_000);
});

describe('the flawed apps beside them', () => {
  it('a start form posting to another origin is no start form: the run stops, saying so', async () => {
    const { report } = await audit({ formAction: 'otherOrigin' });
    expect(report.stopped).toMatch(/no start form with a _csrf field on \/$/);
  }, 120_000);

  it("errors: 'next' with an error page caches may keep for a minute fails headers.kit-pages", async () => {
    const { report, table } = await audit({ errorsNext: true, cachedErrorPage: true });
    expect(failedIds(report), table).toEqual(['headers.kit-pages']);
    expect(table).toMatch(/POST \/verify\/start 403 is not Cache-Control: no-store/);
  }, 120_000);
});
