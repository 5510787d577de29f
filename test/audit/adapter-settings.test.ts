/**
 * describeAudit's settings were taken as given: `requireEveryCheck` misspelt (`requireEveryChecks`)
 * left a check not run skipped and the CI run green, `only: 'leak.secret'` (one id, not a list)
 * threw "ids.every is not a function", and an id no check has declared a case that could only fail
 * with "the audit did not run". Each is refused as the suite is declared, saying how to write it,
 * before any case or run exists.
 */
import { describe, expect, it } from 'vitest';
import { describeAudit, type DescribeAuditSettings } from '../../testing/audit/adapter.ts';

/** A runner that records the cases declared; the audit itself never runs. */
function recordingRunner(cases: string[]) {
  return {
    describe: (_name: string, body: () => void) => body(),
    it: (name: string) => void cases.push(name),
    beforeAll: () => undefined,
  };
}

/** The message describeAudit refuses `settings` with (it must refuse them). */
function refusal(settings: object): string {
  const cases: string[] = [];
  try {
    describeAudit(recordingRunner(cases), () => ({}) as never, settings as DescribeAuditSettings);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    expect(cases).toEqual([]);
    return (error as Error).message;
  }
  throw new Error('describeAudit took the settings');
}

describe("describeAudit's settings", () => {
  it.each([
    [
      { requireEveryChecks: true },
      '`requireEveryChecks` is not a setting of describeAudit: did you mean `requireEveryCheck`?',
    ],
    [{ timeout: 60_000 }, '`timeout` is not a setting of describeAudit: did you mean `timeoutMs`?'],
    [{ only: 'leak.secret' }, "`only` must be a list of check ids (AUDIT_CHECK_IDS), e.g. ['leak.secret']."],
    [
      { only: ['leak.secret', 'leak.secrets'] },
      '`only` names unknown check id(s): leak.secrets (see AUDIT_CHECK_IDS).',
    ],
    [{ requireEveryCheck: 'yes' }, '`requireEveryCheck` must be true or false.'],
    [{ timeoutMs: '240000' }, "`timeoutMs` must be the whole run's bound in milliseconds"],
  ])('%j is refused as the suite is declared, saying how to write it', (settings, said) => {
    const message = refusal(settings);
    expect(message).toMatch(/^describeAudit: 1 problem\(s\) with the settings/);
    expect(message).toContain(said);
  });

  it('the settings the docs show declare one case per check named', () => {
    const cases: string[] = [];
    describeAudit(recordingRunner(cases), () => ({}) as never, {
      name: 'audit',
      only: ['leak.secret', 'cookie.flags'],
      timeoutMs: 60_000,
      requireEveryCheck: true,
    });
    expect(cases).toEqual(['leak.secret', 'cookie.flags']);
  });

  // A blank id passed the settings' check, then declared a case named '' and failed the run with
  // "unknown check id(s) in `only`: .".
  it('an `only` split from a variable ending in a comma declares one case per check it names, and runs those', async () => {
    const cases: string[] = [];
    let run: (() => void | Promise<void>) | undefined;
    const runner = {
      describe: (_name: string, body: () => void) => body(),
      it: (name: string) => void cases.push(name),
      beforeAll: (body: () => void | Promise<void>) => void (run = body),
    };
    const options = {
      appUrl: 'http://127.0.0.1:1',
      emulatorUrl: 'http://127.0.0.1:1',
      clientId: 'audit-client',
      clientSecret: 'adapter-settings-audit-secret-52c1',
      signIn: { path: '/login', fields: (user: string) => ({ user }) },
      actions: [{ name: 'confirm_phone' }],
      probe: () => 0,
    };
    describeAudit(runner, () => options, { only: 'leak.secret, cookie.flags,'.split(',') });
    expect(cases).toEqual(['leak.secret', 'cookie.flags']);
    // The run itself takes the ids: it goes on to the emulator (none listens here), not refused.
    await expect(Promise.resolve(run?.())).resolves.toBeUndefined();
  });
});
