/**
 * A misspelt option of the audit was dropped without a word: `stepup` left every step-up check not
 * run (the report ok), `proxy` written without its `headers` had cookie.flags never ask for Secure,
 * `timeout` kept the default deadline. Every name the audit does not know, at the top or inside an
 * action, a guarded route, a sign-in form, `sweep` or `proxy`, is refused before any request, with
 * the name it most likely meant, and never with the client secret.
 */
import { describe, expect, it } from 'vitest';
import type { AuditOptions } from '../../testing/audit/options.ts';
import { auditIntegration } from '../../testing/audit/runner.ts';

const SECRET = 'option-names-audit-secret-7f3e';

/** Options that are sound but for what a test adds; nothing listens at these addresses. */
const base: AuditOptions = {
  appUrl: 'http://127.0.0.1:1',
  emulatorUrl: 'http://127.0.0.1:1',
  clientId: 'audit-client',
  clientSecret: SECRET,
  signIn: { path: '/login', fields: (user) => ({ user }) },
  actions: [{ name: 'confirm_phone' }],
  probe: () => 0,
};

/** The message the audit refuses `options` with (it must refuse them, before any request). */
async function refusal(options: object): Promise<string> {
  try {
    await auditIntegration(options as AuditOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
  throw new Error('the audit took the options');
}

describe('names the audit does not know', () => {
  it('a misspelt top-level option is refused with the name it most likely meant', async () => {
    const message = await refusal({
      ...base,
      stepup: [{ path: '/security', scope: 'security', maxAge: 600 }],
      timeout: 5_000,
      SessionCookie: 'sid',
    });
    expect(message).toMatch(/3 problem\(s\)/);
    expect(message).toContain('`stepup` is not an option of the audit: did you mean `stepUp`?');
    expect(message).toContain('`timeout` is not an option of the audit: did you mean `timeoutMs`?');
    expect(message).toContain('`SessionCookie` is not an option of the audit: did you mean `sessionCookie`?');
  });

  it('a misspelt name inside an action, a route, the sign-in form, sweep or proxy is refused too', async () => {
    const message = await refusal({
      ...base,
      signIn: { path: '/login', fields: (user: string) => ({ user }), tokenfield: '_token' },
      actions: [{ name: 'confirm_phone', feilds: { amount: '1' } }],
      stepUp: [{ path: '/security', scopes: 'security', scope: 'security', maxAge: 600 }],
      sweep: { run: async () => {}, clock: { advance: () => {} }, advanceSecond: 60 },
      proxy: { 'x-forwarded-proto': 'https' },
    });
    // The proxy without its headers is also of the wrong shape: one more problem.
    expect(message).toMatch(/6 problem\(s\)/);
    expect(message).toContain('`signIn.tokenfield` is not an option of the audit: did you mean `signIn.tokenField`?');
    expect(message).toContain('`actions[0].feilds` is not an option of the audit: did you mean `actions[0].fields`?');
    expect(message).toContain('`stepUp[0].scopes` is not an option of the audit: did you mean `stepUp[0].scope`?');
    expect(message).toContain(
      '`sweep.advanceSecond` is not an option of the audit: did you mean `sweep.advanceSeconds`?',
    );
    expect(message).toContain('`proxy.x-forwarded-proto` is not an option of the audit: the options here are headers');
  });

  it('a name holding the client secret is refused without it', async () => {
    const message = await refusal({ ...base, [`secret_${SECRET}`]: true });
    expect(message).toContain('is not an option of the audit');
    expect(message).not.toContain(SECRET.slice(0, 8));
  });

  it('a long name whose cut falls in the client secret keeps none of it', async () => {
    // Cut at 60 characters, the name keeps the secret's first seven: too few for a scrub to tell.
    const message = await refusal({ ...base, [`${'k'.repeat(53)}${SECRET}`]: true });
    expect(message).toContain('is not an option of the audit');
    expect(message).not.toContain(SECRET.slice(0, 7));
  });

  it('every option the audit documents is taken (a sign-in function, the optional groups given)', async () => {
    const options: Required<AuditOptions> = {
      ...base,
      signIn: async () => ({ csrf: 'x' }),
      actions: [{ name: 'confirm_phone', path: '/verify/start', fields: {}, enteredNumber: { numberOf: () => null } }],
      probe: () => 0,
      kit: { serviceUrl: 'http://127.0.0.1:1' },
      serviceUrl: 'http://127.0.0.1:1',
      sweep: { run: async () => {}, clock: { advance: () => {} }, advanceSeconds: 60 },
      stepUp: [{ path: '/security', method: 'GET', scope: 'security', maxAge: 600, resource: false }],
      clock: { advance: () => {} },
      logs: () => [],
      proxy: { headers: { 'x-forwarded-proto': 'https' } },
      sessionCookie: 'sid',
      stormSize: 2,
      burstSize: 2,
      ipBurstSize: 2,
      concurrency: 1,
      only: ['cookie.flags'],
      timeoutMs: 1_000,
    };
    // Nothing listens: the run stops at the emulator, past the options.
    const report = await auditIntegration(options);
    expect(report.stopped).toMatch(/the emulator's control API/);
  });
});
