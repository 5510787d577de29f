/**
 * The adapter under node:test: every check is a test case of `node --test`, a failing check fails
 * its own case (with its evidence and fix) and no other, and a check not run is a skipped case with
 * its reason, never a pass; a run in which no check ran fails, saying so.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { AUDIT_CHECK_IDS, describeAudit } from 'hosted-sms-verify-kit/testing';

const fixture = fileURLToPath(new URL('./node-test-audit.fixture.ts', import.meta.url));

function runNodeTest(flaw: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-reporter=tap', fixture],
      { env: { ...process.env, ...env, AUDIT_FLAW: flaw }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number), out: `${stdout}${stderr}` }),
    );
  });
}

it('node --test: one case per check; the nextRedirect flaw fails redirect.landing alone, with its fix; without `stepUp` (nor an action’s step-up) the step-up cases are skipped with the reason', async () => {
  const { code, out } = await runNodeTest('nextRedirect', { AUDIT_NO_STEP_UP: '1' });
  expect(code).not.toBe(0);
  const failed = [...out.matchAll(/^\s*not ok \d+ - (\S+)$/gm)].map((m) => m[1]);
  const passed = [...out.matchAll(/^\s*ok \d+ - (\S+)$/gm)].map((m) => m[1]);
  const skipped = [...out.matchAll(/^\s*ok \d+ - (\S+) # SKIP (.*)$/gm)].map((m) => [m[1], m[2]]);
  const stepUp = AUDIT_CHECK_IDS.filter((id) => id.startsWith('step-up.'));
  expect(failed.filter((name) => name !== 'hosted-sms-verify-kit')).toEqual(['redirect.landing']);
  expect(passed.sort()).toEqual(
    AUDIT_CHECK_IDS.filter((id) => id !== 'redirect.landing' && !stepUp.includes(id)).sort(),
  );
  expect(skipped).toEqual(
    stepUp.map((id) => [
      id,
      expect.stringMatching(
        id === 'step-up.action-start'
          ? /^not run: no action of `actions` has `requireRecentVerification`/
          : /^not run: give your guarded routes as `stepUp/,
      ),
    ]),
  );
  expect(out).toContain('Never redirect to a URL taken from a parameter');
}, 150_000);

it('node --test: a run in which no check ran (the step-up checks alone, without `stepUp`) fails its first case saying so with each one’s reason, the others skipped: never a green run of skips', async () => {
  const stepUp = AUDIT_CHECK_IDS.filter((id) => id.startsWith('step-up.'));
  const { code, out } = await runNodeTest('', { AUDIT_NO_STEP_UP: '1', AUDIT_ONLY: stepUp.join(',') });
  expect(code).not.toBe(0);
  const failed = [...out.matchAll(/^\s*not ok \d+ - (\S+)$/gm)].map((m) => m[1]);
  const skipped = [...out.matchAll(/^\s*ok \d+ - (\S+) # SKIP/gm)].map((m) => m[1]);
  expect(failed.filter((name) => name !== 'hosted-sms-verify-kit')).toEqual([stepUp[0]]);
  expect(skipped).toEqual(stepUp.slice(1));
  expect(out).toMatch(/no check ran: step-up\.\S+ \(give your guarded routes as `stepUp/);
}, 150_000);

it('describeAudit with an `only` naming no check throws as the suite is declared, never a suite of no cases that passes', () => {
  const cases: string[] = [];
  const runner = {
    describe: (_name: string, body: () => void) => body(),
    it: (name: string) => void cases.push(name),
    beforeAll: () => undefined,
  };
  for (const only of [[], ['', ' ']]) {
    expect(() => describeAudit(runner, () => ({}) as never, { only })).toThrow(
      'describeAudit: `only` names no check: list check ids (AUDIT_CHECK_IDS), or leave it out to run every check.',
    );
  }
  expect(cases).toEqual([]);
});
