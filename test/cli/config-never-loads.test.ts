/**
 * A configuration that waits on something that never answers, and holds nothing else (no timer, no
 * socket), as each command loads it: its top-level code (a top-level await), or the audit's function
 * of env, or the audit's close(). Node would end such a process at once with exit 13 and nothing said;
 * each command instead ends within its deadline, exit 1, saying what did not finish, no stack. Runs the
 * bin as built: needs `npm run build` (npm test builds dist/ first). The commands run on a test clock
 * twenty times faster (test/fixtures/scaled-timers.mjs): their messages still name the deadlines they
 * were built with, and each waits a twentieth of it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const SCALED_TIMERS = fileURLToPath(new URL('../fixtures/scaled-timers.mjs', import.meta.url));
/** How many times faster the commands' timers run: nothing but the deadline is awaited here. */
const TIMER_SCALE = 20;
/** The database password a late close()'s error quotes. */
const LATE_PASSWORD = 'late-close-pw-41';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-cli-never-'));
  writeFileSync(join(dir, 'awaits-never.config.mjs'), 'await new Promise(() => {});\nexport default {};\n');
  writeFileSync(join(dir, 'answers-never.config.mjs'), 'export default () => new Promise(() => {});\n');
  // Options the audit refuses, and a close() that never settles.
  writeFileSync(join(dir, 'closes-never.config.mjs'), 'export default { close: () => new Promise(() => {}) };\n');
  // Options the audit refuses, and a close() that fails half a second after its 30 s.
  writeFileSync(
    join(dir, 'closes-late.config.mjs'),
    `export default {
       close: () => new Promise((_resolve, reject) =>
         setTimeout(() => reject(new Error('pool.end failed: postgres://app:${LATE_PASSWORD}@db/app lost')), 30_500)),
     };\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const env = { PATH: process.env.PATH ?? '', TEST_TIMER_SCALE: String(TIMER_SCALE) };
  const options = { cwd: dir, env, timeout: 60_000 };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', SCALED_TIMERS, MAIN, ...argv], options, (error, stdout, stderr) =>
      resolve({
        code: error === null ? 0 : error.killed ? -1 : Number(error.code),
        stdout,
        stderr,
        ms: Date.now() - started,
      }),
    );
  });
}

describe("the audit's deadline on an integrator's function", () => {
  it('a function that never settles, holding nothing, fails with its sentence after the deadline: the process is not ended unsaid', async () => {
    const hooks = builtFile('testing/audit/hooks.js');
    const script = `const { callHook } = await import(${JSON.stringify(hooks)});
      await callHook('your probe', 1000, () => new Promise(() => {})).catch((e) => console.log(e.message));`;
    const result = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 }, (error, stdout) =>
        resolve({ code: error === null ? 0 : Number(error.code), stdout }),
      );
    });
    expect(result).toEqual({ code: 0, stdout: 'your probe did not answer within 1000 ms\n' });
  });
});

describe.concurrent('a configuration that never finishes loading, holding nothing', () => {
  it('fraud: a top-level await that never settles ends the command after 10 s, exit 1, saying so', async () => {
    const result = await run(['fraud', 'rules', '--config', 'awaits-never.config.mjs']);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'hosted-sms-verify-kit fraud: --config awaits-never.config.mjs: loading it did not finish within 10000 ms: does its top-level code wait on something that never answers?\n',
    });
    expect(result.ms).toBeGreaterThanOrEqual(9_500 / TIMER_SCALE);
  });

  it('audit: a close() that never settles still lets the command say why it stopped, after 30 s, exit 1', async () => {
    const result = await run(['audit', '--config', 'closes-never.config.mjs']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^your close\(\) did not answer within 30000 ms\nhosted-sms-verify-kit audit: auditIntegration: \d+ problem\(s\) with the options:\n/,
    );
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.ms).toBeGreaterThanOrEqual(29_000 / TIMER_SCALE);
  });

  it('audit: a close() that fails after its 30 s: the deadline said, then why it failed, once, its URL without the password, no stack', async () => {
    const result = await run(['audit', '--config', 'closes-late.config.mjs']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^your close\(\) did not answer within 30000 ms\n/);
    expect(result.stderr).toContain(
      'your close() failed after its deadline: pool.end failed: postgres://app:[redacted]@db/app lost\n',
    );
    expect(result.stderr.match(/failed after its deadline/g)).toHaveLength(1);
    expect(result.stderr).not.toContain(LATE_PASSWORD);
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('audit: a top-level await, or a function of env, that never settles ends the command after 120 s, exit 1, saying so', async () => {
    const configs = ['awaits-never.config.mjs', 'answers-never.config.mjs'];
    const results = await Promise.all(configs.map((config) => run(['audit', '--config', config])));
    results.forEach((result, i) => {
      expect(result, configs[i]).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `hosted-sms-verify-kit audit: --config ${configs[i]}: loading it and its function of env did not finish within 120000 ms: does it wait on something that never answers?\n`,
      });
      expect(result.ms).toBeGreaterThanOrEqual(119_000 / TIMER_SCALE);
    });
  });
});
