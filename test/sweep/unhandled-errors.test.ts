/**
 * The sweep command runs the configuration's code in its process: a promise that code left floating
 * (a fulfil's or a metrics push's), or a timer of its own that throws, must not end `sweep --loop`
 * with Node's stack trace and the error's message, which quoted a client secret the configuration
 * read from a file (not the environment). Each is one line, no secret, no stack, and the job sweeps
 * on; one that comes before the kit is built is said without its message. So is one that comes
 * after the job returned, in the command's exit grace. Runs the built bin.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');
const SQLITE = builtFile('middleware/store/sqlite/sqlite.js');
/** Read from a file by the configuration: no environment variable names it. */
const SECRET = 'from-a-file-secret-0123456789';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-unhandled-'));
  const options = (extra: string, exported = 'kit') => `import { createSqliteStore } from ${JSON.stringify(SQLITE)};
    const secret = ${JSON.stringify(SECRET)};
    ${extra}
    const kit = {
      baseUrl: 'http://127.0.0.1:9', clientId: 'unhandled-client', clientSecret: secret,
      returnUrl: 'http://localhost:3998/verify/return',
      store: createSqliteStore({ database: ${JSON.stringify(join(dir, 'app.sqlite'))} }),
      actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
    };
    export default ${exported};`;
  writeFileSync(
    join(dir, 'floating.config.mjs'),
    options(`setTimeout(() => { Promise.reject(new Error('metrics push failed, auth ' + secret)); }, 300);
      setTimeout(() => { throw new Error('flush failed, auth ' + secret); }, 600);`),
  );
  writeFileSync(
    join(dir, 'early.config.mjs'),
    `Promise.reject(new Error('warm-up failed, auth ${SECRET}'));
     export default () => new Promise((_, reject) => setTimeout(() => reject(new Error('no database')), 200));`,
  );
  // Its factory fails; a timer of its own throws once the job has returned, quoting the secret.
  writeFileSync(
    join(dir, 'failing-late.config.mjs'),
    `export default () => {
       setTimeout(() => { throw new Error('late warm-up failed, auth ${SECRET}'); }, 300);
       return Promise.reject(new Error('no database'));
     };`,
  );
  // Its close, the job's last call, leaves a timer that fails once the job has returned: in the
  // command's exit grace, before the process exits.
  writeFileSync(
    join(dir, 'late.config.mjs'),
    options(
      `const late = () => {
        setTimeout(() => { Promise.reject(new Error('late metrics push failed, auth ' + secret)); }, 100);
        setTimeout(() => { throw new Error('late flush failed, auth ' + secret); }, 200);
        setTimeout(() => {}, 400);
      };`,
      '{ kit, close: late }',
    ),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the bin with `args`; sends SIGTERM once what it printed so far satisfies `termWhen`. */
function bin(
  args: string[],
  termWhen?: (printed: Record<string, unknown>[]) => boolean,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : (child.exitCode ?? null), stdout, stderr }),
    );
    if (termWhen === undefined) return;
    let printed = '';
    // Once: a second SIGTERM ends the job at once.
    const onData = (chunk: Buffer) => {
      printed += chunk.toString();
      if (!termWhen(events(printed.slice(0, printed.lastIndexOf('\n') + 1)))) return;
      child.stdout?.off('data', onData);
      child.kill('SIGTERM');
    };
    child.stdout?.on('data', onData);
  });
}

function events(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('sweep --loop with a configuration whose code leaves an error unhandled', () => {
  it('says each in a line without the secret or a stack, sweeps on, and stops on SIGTERM with exit 0', async () => {
    // Stopped once both errors were said and a run came after them (however slow the machine).
    const sweptOnAfterBoth = (printed: Record<string, unknown>[]) => {
      const said = printed.filter((line) => line.event === 'sweep_unhandled_error').length;
      const runsAfter = printed.slice(printed.findLastIndex((line) => line.event === 'sweep_unhandled_error'));
      return (
        said >= 2 &&
        printed.filter((line) => line.event === 'sweep').length >= 3 &&
        runsAfter.some((line) => line.event === 'sweep')
      );
    };
    // Its own process runs in real time: a run every 0.1 s soon puts one after each error (0.3 s and 0.6 s in).
    const run = await bin(
      ['sweep', '--loop', '--interval-seconds', '0.1', '--config', './floating.config.mjs'],
      sweptOnAfterBoth,
    );
    const output = run.stdout + run.stderr;
    expect(output).not.toContain(SECRET);
    expect(output).not.toMatch(/\n\s+at /);
    const lines = events(run.stdout);
    const unhandled = lines.filter((line) => line.event === 'sweep_unhandled_error');
    expect(unhandled.map((line) => (line.error as { message: string }).message)).toEqual([
      'metrics push failed, auth [redacted]',
      'flush failed, auth [redacted]',
    ]);
    expect(unhandled.map((line) => line.message)).toEqual([
      expect.stringContaining('rejected and nothing handled it; the job goes on'),
      expect.stringContaining('threw and nothing handled it; the job goes on'),
    ]);
    // Runs after both errors: the job went on.
    const runs = lines.filter((line) => line.event === 'sweep');
    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect(lines.at(-1)?.event).not.toBe('sweep_unhandled_error');
    expect(run.code).toBe(0);
  }, 30_000);
});

describe('sweep --once with a configuration that leaves an error unhandled while it loads and then fails', () => {
  it('says it without its message (the secret is not known yet), then the configuration error, exit 1', async () => {
    const run = await bin(['sweep', '--once', '--config', './early.config.mjs']);
    const output = run.stdout + run.stderr;
    expect(output).not.toContain(SECRET);
    expect(output).not.toMatch(/\n\s+at /);
    const lines = events(run.stdout);
    expect(lines.map((line) => line.event)).toEqual(['sweep_unhandled_error', 'sweep_config_error']);
    expect((lines[0]?.error as { message: string }).message).toMatch(/^not shown: it came before the kit was built/);
    expect(run.code).toBe(1);
  }, 30_000);
});

describe('sweep --once with a configuration whose code fails after the job returned, before the process exits', () => {
  it("says each in a line without the secret or a stack, and exits with the run's code", async () => {
    const run = await bin(['sweep', '--once', '--config', './late.config.mjs']);
    const output = run.stdout + run.stderr;
    expect(output).not.toContain(SECRET);
    expect(output).not.toMatch(/\n\s+at /);
    const lines = events(run.stdout);
    expect(lines.map((line) => line.event)).toEqual(['sweep', 'sweep_unhandled_error', 'sweep_unhandled_error']);
    expect(lines.slice(1).map((line) => (line.error as { message: string }).message)).toEqual([
      'late metrics push failed, auth [redacted]',
      'late flush failed, auth [redacted]',
    ]);
    expect(lines[1]?.message).toContain('rejected after the job ended and nothing handled it');
    // An empty store: nothing to read, the run is done.
    expect(run.code).toBe(0);
  }, 30_000);
});

describe('sweep --once with a configuration that fails, then throws before the process exits', () => {
  it('says it without its message (the kit was never built), after the configuration error, exit 1', async () => {
    const run = await bin(['sweep', '--once', '--config', './failing-late.config.mjs']);
    const output = run.stdout + run.stderr;
    expect(output).not.toContain(SECRET);
    expect(output).not.toMatch(/\n\s+at /);
    const lines = events(run.stdout);
    expect(lines.map((line) => line.event)).toEqual(['sweep_config_error', 'sweep_unhandled_error']);
    expect(lines[1]).toMatchObject({
      message: expect.stringContaining('threw after the job ended'),
      error: { message: expect.stringMatching(/^not shown: it came before the kit was built/) },
    });
    expect(run.code).toBe(1);
  }, 30_000);
});
