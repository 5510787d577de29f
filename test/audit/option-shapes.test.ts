/**
 * An option of the wrong type was taken and found out mid-run, or never: `only: 'leak.secret'`
 * crashed with "only.every is not a function", `sweep: null` with "Cannot read properties of null
 * (reading 'run')", `proxy: { headers: 'https' }` was sent letter by
 * letter, `logs` as an array was read as no log, an action's `fields` as a query string became
 * fields named 0, 1, 2... Each is refused when the audit is called, before any request, saying how
 * to write it; the shapes the docs show are taken.
 */
import { describe, expect, it } from 'vitest';
import type { AuditOptions } from '../../testing/audit/options.ts';
import { auditIntegration } from '../../testing/audit/runner.ts';

/** Options that are sound but for what a test adds; nothing listens at these addresses. */
const base: AuditOptions = {
  appUrl: 'http://127.0.0.1:1',
  emulatorUrl: 'http://127.0.0.1:1',
  clientId: 'audit-client',
  clientSecret: 'option-shapes-audit-secret-91d0',
  signIn: { path: '/login', fields: (user) => ({ user }) },
  actions: [{ name: 'confirm_phone' }],
  probe: () => 0,
};

/** The message the audit refuses `options` with (it must refuse them). */
async function refusal(options: object): Promise<string> {
  try {
    await auditIntegration(options as AuditOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
  throw new Error('the audit took the options');
}

describe('options of the wrong type', () => {
  it.each([
    [{ only: 'leak.secret' }, "`only` must be a list of check ids (AUDIT_CHECK_IDS), e.g. ['leak.secret']."],
    [{ logs: ['a line'] }, "`logs` must be a function returning your app's log lines so far"],
    [{ sessionCookie: 5 }, "`sessionCookie` must be your session cookie's name"],
    [{ sweep: null }, '`sweep` must be { run: () => kit.runSweep(), clock }'],
    [{ proxy: { headers: 'https' } }, "`proxy` must be { headers: { name: 'value' } }"],
    [{ proxy: { headers: { 'x-forwarded-proto': true } } }, "`proxy` must be { headers: { name: 'value' } }"],
    [
      { actions: [{ name: 'confirm_phone', fields: 'amount=1' }] },
      "`actions[0].fields` must be the form's other fields",
    ],
    [{ actions: [{ name: 'confirm_phone', path: 'verify/start' }] }, "`actions[0].path` must be the kit's start path"],
    [
      { signIn: { path: '/login', fields: () => ({}), csrfFrom: 1 } },
      "`signIn.csrfFrom` must be a path on your app, e.g. '/'.",
    ],
    [
      { signIn: { path: '/login', fields: () => ({}), tokenField: '' } },
      "`signIn.tokenField` must be the name of your sign-in form's own hidden token field",
    ],
  ])('%j is refused, saying how to write it', async (extra, said) => {
    const message = await refusal({ ...base, ...extra });
    expect(message).toMatch(/1 problem\(s\)/);
    expect(message).toContain(said);
  });

  it('the shapes the docs show are taken (the run goes on to the emulator)', async () => {
    const report = await auditIntegration({
      ...base,
      signIn: { path: '/', action: '/signin', fields: (user) => ({ user }), csrfFrom: '/', tokenField: '_token' },
      actions: [
        { name: 'confirm_phone', path: '/app/verify/start', fields: { amount: '1' } },
        { name: 'pay', fields: (n) => ({ payee: `P${n}` }) },
      ],
      logs: () => [],
      sessionCookie: 'connect.sid',
      proxy: { headers: { 'x-forwarded-proto': 'https' } },
      only: ['cookie.flags'],
    });
    expect(report.stopped).toMatch(/the emulator's control API/);
  });

  // A list split from a variable ending in a comma was refused as "unknown check id(s) in `only`: ."
  it('`only` with a blank or padded id (a list split from "cookie.flags, leak.secret,") runs the checks it names', async () => {
    const report = await auditIntegration({ ...base, only: ['cookie.flags', ' leak.secret', ''] });
    expect(report.stopped).toMatch(/the emulator's control API/);
    expect(report.checks.map((check) => check.id)).toEqual(['cookie.flags', 'leak.secret']);
  });
});
