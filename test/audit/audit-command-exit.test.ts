/**
 * The audit command's exit code says whether anything was checked and whether your close() worked:
 * a run in which no check ran never passes, and a close() that fails is said on one line and fails
 * the command, the checks' verdict standing in the report.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// The command as the bin runs it: from the build.
import { command } from '../../dist/testing/audit/command.js';

const sample = fileURLToPath(new URL('./sample.config.ts', import.meta.url));
const noStepUp = fileURLToPath(new URL('./no-step-up.config.ts', import.meta.url));

async function run(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const code = await command.run(
    argv,
    env,
    (text) => (out += text),
    (text) => (err += text),
  );
  return { code, out, err };
}

describe('hosted-sms-verify-kit audit: exit codes', () => {
  it('--only naming checks that all end up not run: exit 1, and a line saying no check ran, which and why', async () => {
    const { code, out, err } = await run(['--config', noStepUp, '--only', 'step-up.bound,step-up.redirect']);
    expect(out).toContain('0 passed, 0 failed, 2 not run');
    expect(code).toBe(1);
    const lines = err.split('\n').filter((line) => line.startsWith('no check ran'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^no check ran: step-up\.bound \(give your guarded routes as `stepUp: .*\); step-up\.redirect \(give your guarded routes /,
    );
  }, 60_000);

  it('one check run and one not run: the checks that ran decide (exit 0), nothing said of no check running', async () => {
    const { code, err } = await run(['--config', noStepUp, '--only', 'forged.wrong-state,step-up.bound']);
    expect(code).toBe(0);
    expect(err).not.toContain('no check ran');
  }, 60_000);

  it('a close() that throws after passing checks: the report stands, its failure is one line without the secret, exit 2', async () => {
    const secret = 'sample-client-secret-that-must-not-print';
    const { code, out, err } = await run(['--config', sample, '--only', 'forged.wrong-state', '--json'], {
      AUDIT_CLOSE_FAILS: `pool ended: postgres://audit:dbpass99@db/test ${secret}`,
      VERIFY_CLIENT_SECRET: secret,
    });
    expect((JSON.parse(out) as { ok: boolean }).ok).toBe(true);
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toMatch(/^your close\(\) failed: pool ended: /);
    expect(err).not.toContain('dbpass99');
    expect(err).not.toContain(secret);
    expect(err).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('a close() that fails after failing checks: the failing checks decide (exit 2)', async () => {
    const { code, err } = await run(['--config', sample, '--only', 'redirect.landing'], {
      AUDIT_FLAW: 'nextRedirect',
      AUDIT_CLOSE_FAILS: 'already closed',
    });
    expect(code).toBe(2);
    expect(err).toContain('your close() failed: already closed');
  }, 60_000);
});
