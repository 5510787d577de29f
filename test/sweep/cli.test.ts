/**
 * The copyable job's body (runSweepJob): its output line and exit codes, in-process with a
 * recording `print`, and as a real process.
 */
import { DEFAULT_SWEEP_READ_AGES_MS } from '../../middleware/sweep/read-ages.ts';
import type { Database } from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { getPriority } from 'node:os';
import { DEFAULT_SWEEP_NICE, parseJobConfig } from '../../middleware/sweep/sweep-job-args.ts';
import { runSweepJob, SweepJobExitCode, type SweepJobKit } from '../../middleware/sweep/sweep-job.ts';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  countEffects,
  useSweepBench,
  jobKit,
  jsonLines,
  killSweepProcesses,
  spawnSweepProcess,
  type Bench,
} from '../support/sweep-bench.ts';
import { waitFor, within } from '../support/wait-for.ts';
import { createTestClock } from '../support/clock.ts';
import { freePort } from '../support/listen.ts';

/** Just past the default schedule's next read after one at age 0 (4.5 min). */
const DUE_AGAIN_MS = DEFAULT_SWEEP_READ_AGES_MS[0]! + 1000;

const { emu, openBench } = useSweepBench();
let b: Bench;

afterEach(async () => {
  vi.useRealTimers();
  killSweepProcesses();
});

function recorder() {
  const out: string[] = [];
  return {
    out,
    print: (line: string) => out.push(line),
    parsed: () => out.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('runSweepJob', () => {
  it('--once prints one JSON line with the run counts and exits 0', async () => {
    b = await openBench();
    const [verified, failed, undecided] = await b.createAttempts(3);
    await emu.control.completeSession(verified!.sessionId, 'verified');
    await emu.control.completeSession(failed!.sessionId, 'failed', 'otp_locked');
    void undecided;
    const r = recorder();
    const code = await runSweepJob({
      kit: jobKit(b.deps),
      argv: ['--once'],
      env: {},
      print: r.print,
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.Ok);
    expect(r.out).toHaveLength(1);
    const [line] = r.parsed();
    expect(line).toMatchObject({
      event: 'sweep',
      mode: 'once',
      claimed: 3,
      fulfilled: 1,
      failed: 1,
      pending: 1,
      expired: 0,
      errors: 0,
      serviceReachable: true,
    });
    expect(typeof line!.durationMs).toBe('number');
    expect(countEffects(b.store.db)).toBe(1);
  });

  it('exits 2 when the service cannot be reached at all (nothing listening), and the attempts stay pending', async () => {
    b = await openBench();
    const attempts = await b.createAttempts(2);
    const unreachable = createVerifyClient({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      retry: { maxAttempts: 1 },
    });
    const r = recorder();
    const code = await runSweepJob({
      kit: jobKit({ ...b.deps, client: unreachable }),
      argv: ['--once'],
      env: {},
      print: r.print,
      handleSignals: false,
    });
    await unreachable.close();
    expect(code).toBe(SweepJobExitCode.ServiceUnreachable);
    expect(r.parsed()).toEqual([
      expect.objectContaining({ event: 'sweep', claimed: 2, errors: 2, serviceReachable: false }),
    ]);
    for (const a of attempts) expect((await b.attempt(a.state)).outcome).toBe('pending');
  });

  it('exits 0, not 2, when some reads fail but the service answered others', async () => {
    b = await openBench(Date.now, { statusReadAttempts: 1 });
    await b.createAttempts(3);
    await emu.control.injectFaults({ statusFailures: 2 });
    const r = recorder();
    const code = await runSweepJob({
      kit: jobKit(b.deps),
      argv: ['--once', '--concurrency', '1'],
      env: {},
      print: r.print,
      handleSignals: false,
    });
    expect(r.parsed()[0]).toMatchObject({ claimed: 3, errors: 2, pending: 1, serviceReachable: true });
    expect(code).toBe(SweepJobExitCode.Ok);
  });

  it("gives a kit factory the job's concurrency (--concurrency, else SWEEP_CONCURRENCY, else 4) to size its client by", async () => {
    b = await openBench();
    const given: number[] = [];
    const job = { print: recorder().print, handleSignals: false };
    const factory = (_env: unknown, settings: { concurrency: number }) => {
      given.push(settings.concurrency);
      return jobKit(b.deps);
    };
    await runSweepJob({
      ...job,
      kit: factory,
      argv: ['--once', '--concurrency', '7'],
      env: { SWEEP_CONCURRENCY: '3' },
    });
    await runSweepJob({ ...job, kit: factory, argv: ['--once'], env: { SWEEP_CONCURRENCY: '3' } });
    await runSweepJob({ ...job, kit: factory, argv: ['--once'], env: {} });
    expect(given).toEqual([7, 3, 4]);
  });

  it('closes the kit and the store it built from a factory, and leaves a given kit open', async () => {
    b = await openBench();
    const closed: string[] = [];
    const tracked = () => {
      const kit = jobKit(b.deps);
      return {
        ...kit,
        store: { ...b.store, close: async () => void closed.push('store') },
        close: async () => void closed.push('kit'),
      };
    };
    const job = { argv: ['--once'], env: {}, print: recorder().print, handleSignals: false };
    expect(await runSweepJob({ ...job, kit: () => tracked() })).toBe(SweepJobExitCode.Ok);
    expect(closed).toEqual(['kit', 'store']);
    closed.length = 0;
    expect(await runSweepJob({ ...job, kit: tracked() })).toBe(SweepJobExitCode.Ok);
    expect(closed).toEqual([]);
  });

  it('a close of the configuration that hangs or throws is reported in a line and never holds the job open', async () => {
    b = await openBench();
    const failing = (close: () => Promise<void>) => () => ({ ...jobKit(b.deps), store: { ...b.store, close }, close });
    const job = { argv: ['--once'], env: {}, handleSignals: false, stopTimeoutMs: 200 };
    const hung = recorder();
    const began = performance.now();
    const code = await runSweepJob({ ...job, print: hung.print, kit: failing(() => new Promise<void>(() => {})) });
    expect(code).toBe(SweepJobExitCode.Ok);
    expect(performance.now() - began).toBeLessThan(5_000);
    const hungLines = hung.parsed().filter((l) => l.event === 'sweep_close_failed');
    expect(hungLines.map((l) => l.closing)).toEqual(['kit', 'store']);
    expect(JSON.stringify(hungLines)).toContain('did not finish within 200 ms');
    const throwing = recorder();
    await runSweepJob({
      ...job,
      print: throwing.print,
      kit: failing(async () => {
        throw new Error(`pool already ended (${CLIENT_SECRET})`);
      }),
    });
    const thrownLines = throwing.parsed().filter((l) => l.event === 'sweep_close_failed');
    expect(thrownLines).toHaveLength(2);
    expect(JSON.stringify(thrownLines)).toContain('pool already ended');
    expect(throwing.out.join('\n')).not.toContain(CLIENT_SECRET);
  });

  it("--once with a kit whose runSweep never settles (the configuration's own wrapper) fails past twice its time budget: sweep_failed, exit 3", async () => {
    b = await openBench();
    // A ready kit of the integrator's, wrapping runSweep (metrics, say) around a call that never answers.
    const kit = { ...jobKit(b.deps), runSweep: () => new Promise<never>(() => {}) };
    const r = recorder();
    // On the test clock (put back after each test): the job's deadline is twice the budget and the stop timeout.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    let code: number | undefined;
    void runSweepJob({
      kit,
      argv: ['--once', '--time-budget-seconds', '1'],
      env: {},
      print: r.print,
      handleSignals: false,
      stopTimeoutMs: 200,
    }).then((exit) => (code = exit));
    // 2.2 s, and not a millisecond sooner.
    await vi.advanceTimersByTimeAsync(2_199);
    expect(code).toBeUndefined();
    expect(r.out).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(code).toBe(SweepJobExitCode.SweepFailed);
    expect(r.parsed()).toEqual([expect.objectContaining({ event: 'sweep_failed' })]);
    expect(JSON.stringify(r.parsed())).toContain('did not finish within 2200 ms');
  });

  it("--loop with a kit whose worker's stop() never settles (the configuration's own wrapper) ends after a stop signal: sweep_failed, exit 3", async () => {
    b = await openBench();
    let started = false;
    const kit = {
      ...jobKit(b.deps),
      startSweepWorker: () => {
        started = true;
        return {
          owner: 'wrapped',
          running: false,
          runs: 0,
          lastReport: undefined,
          stop: () => new Promise<never>(() => {}),
        };
      },
    };
    const r = recorder();
    const stop = new AbortController();
    const job = runSweepJob({
      kit,
      argv: ['--loop'],
      env: {},
      print: r.print,
      handleSignals: false,
      signal: stop.signal,
      stopTimeoutMs: 200,
    });
    await waitFor(() => started, 5000, 'the worker to start');
    stop.abort();
    expect(await within(5_000, job)).toBe(SweepJobExitCode.SweepFailed);
    expect(r.parsed()).toEqual([
      { event: 'sweep_stopping', signal: 'abort' },
      expect.objectContaining({ event: 'sweep_failed' }),
    ]);
    expect(JSON.stringify(r.parsed())).toContain('did not stop within 600 ms');
  });

  it('a stopped --once job whose run and claim release hang in the store still exits 0, saying the claims lapse with the lease', async () => {
    b = await openBench();
    let claiming = false;
    const store = {
      ...b.store,
      claimDueAttempts: () => {
        claiming = true;
        return new Promise<never>(() => {});
      },
      releaseClaims: () => new Promise<number>(() => {}),
    };
    const r = recorder();
    const stop = new AbortController();
    const job = runSweepJob({
      kit: jobKit({ ...b.deps, store }),
      argv: ['--once'],
      env: {},
      print: r.print,
      handleSignals: false,
      signal: stop.signal,
      stopTimeoutMs: 200,
    });
    await waitFor(() => claiming, 5000, 'the run to claim');
    stop.abort();
    const stoppedAt = performance.now();
    expect(await within(5_000, job)).toBe(SweepJobExitCode.Ok);
    // The reads' wait, then the release's: each at most stopTimeoutMs.
    expect(performance.now() - stoppedAt).toBeLessThan(1_500);
    expect(r.parsed()).toEqual([
      { event: 'sweep_stopping', signal: 'abort' },
      expect.objectContaining({ event: 'sweep_stopped', reason: expect.stringMatching(/they lapse with the lease$/) }),
    ]);
  });

  describe('an integrator call that rejects after the job stopped waiting for it', () => {
    const REASON = `connection refused (${CLIENT_SECRET})`;
    /** Rejects with REASON after `ms`: well after the job's deadline for the call. */
    const failsAfter = (ms: number) => (): Promise<never> =>
      new Promise((_resolve, reject) => setTimeout(() => reject(new Error(REASON)), ms));
    const quietClose = async () => {};

    it.each<
      [string, () => { kit: SweepJobKit<unknown> | (() => SweepJobKit<unknown>); argv: string[]; stops?: boolean }]
    >([
      ['the kit factory', () => ({ kit: failsAfter(400) as () => never, argv: ['--once'] })],
      [
        'kit.close()',
        () => ({
          kit: () => ({ ...jobKit(b.deps), store: { ...b.store, close: quietClose }, close: failsAfter(400) }),
          argv: ['--once'],
        }),
      ],
      [
        'store.close()',
        () => ({ kit: () => ({ ...jobKit(b.deps), store: { ...b.store, close: failsAfter(400) } }), argv: ['--once'] }),
      ],
      [
        'releaseClaims',
        () => ({
          kit: {
            ...jobKit(b.deps),
            runSweep: () => new Promise<never>(() => {}),
            store: { ...b.store, releaseClaims: failsAfter(400) },
          },
          argv: ['--once'],
          stops: true,
        }),
      ],
      [
        'kit.runSweep()',
        // Given up at twice the smallest budget (0.1 s) and the stop timeout: 0.4 s.
        () => ({
          kit: { ...jobKit(b.deps), runSweep: failsAfter(600) },
          argv: ['--once', '--time-budget-seconds', '0.1'],
        }),
      ],
      [
        'worker.stop()',
        // Given up at three stop timeouts: 600 ms.
        () => ({
          kit: {
            ...jobKit(b.deps),
            startSweepWorker: (o) => ({ ...jobKit(b.deps).startSweepWorker(o), stop: failsAfter(900) }),
          },
          argv: ['--loop'],
          stops: true,
        }),
      ],
    ])(
      '%s: its late reason is printed once in a sweep_late_rejection line, redacted, without a stack',
      async (call, make) => {
        b = await openBench();
        const { kit, argv, stops } = make();
        const r = recorder();
        const stop = new AbortController();
        const job = runSweepJob({
          kit,
          argv,
          env: {},
          print: r.print,
          handleSignals: false,
          signal: stop.signal,
          stopTimeoutMs: 200,
        });
        if (stops === true) setTimeout(() => stop.abort(), 300);
        await within(5_000, job);
        const late = () => r.parsed().filter((l) => l.event === 'sweep_late_rejection');
        await waitFor(() => late().length > 0, 3_000, 'the late rejection line');
        expect(late()).toEqual([
          {
            event: 'sweep_late_rejection',
            call,
            error: { name: 'Error', message: expect.stringContaining('connection refused') },
          },
        ]);
        expect(r.out.join('\n')).not.toContain(CLIENT_SECRET);
        expect(r.out.join('\n')).not.toMatch(/at .*\.(ts|js):\d+/);
      },
    );
  });

  it('exits 1 on a configuration error, with a message that names the fix and never the secret', async () => {
    b = await openBench();
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--once', '--batch-size', 'lots'], {}, /--batch-size must be a whole number/],
      [['--interval-seconds=-5'], {}, /--interval-seconds must be a number of seconds from 0\.01/],
      // Beyond what a timer waits (about 24.8 days), or under the worker's 10 ms: refused here, not by the loop.
      [['--interval-seconds', '3000000'], {}, /--interval-seconds must be a number of seconds from 0\.01 to 2147483,/],
      [
        ['--loop'],
        { SWEEP_INTERVAL_SECONDS: '0.001' },
        /SWEEP_INTERVAL_SECONDS must be a number of seconds from 0\.01 to 2147483,/,
      ],
      [['--once', '--bogus'], {}, /Unknown option '--bogus'\. the job's flags: \[--once \| --loop\]/],
      [['--once'], { SWEEP_CONCURRENCY: '500' }, /SWEEP_CONCURRENCY must be a whole number from 1 to 64/],
      [['--once', '--interval-seconds', '10'], {}, /--once runs a single sweep; drop --interval-seconds/],
      [['--once', '--max-reads-per-second', '0'], {}, /--max-reads-per-second must be a positive number/],
      [['--once'], { SWEEP_MAX_READS_PER_SECOND: 'fast' }, /SWEEP_MAX_READS_PER_SECOND must be a positive number/],
    ];
    for (const [argv, env, message] of cases) {
      const r = recorder();
      expect(
        await runSweepJob({ kit: jobKit(b.deps), argv, env, print: r.print, handleSignals: false }),
        argv.join(' '),
      ).toBe(SweepJobExitCode.ConfigError);
      expect(r.parsed()).toEqual([{ event: 'sweep_config_error', message: expect.stringMatching(message) }]);
    }
    // A kit factory that fails (here: the integrator's config echoes the secret) is a config error, redacted.
    const r = recorder();
    const env = { VERIFY_CLIENT_SECRET: CLIENT_SECRET };
    const code = await runSweepJob<Database>({
      kit: (e) => {
        throw new Error(`VERIFY_BASE_URL is missing (secret was ${e.VERIFY_CLIENT_SECRET})`);
      },
      argv: ['--once'],
      env,
      print: r.print,
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.ConfigError);
    expect(r.out.join('\n')).toContain('VERIFY_BASE_URL is missing');
    expect(r.out.join('\n')).not.toContain(CLIENT_SECRET);
  });

  it("a kit factory's error never shows an environment secret in any form: JSON-escaped, percent-encoded, base64, in a Basic header", async () => {
    // Given to no kit in this process: only the job's own reading of the environment can redact it.
    const secret = `job"se\\cret/${randomBytes(9).toString('base64')}+end`;
    const basic = Buffer.from(`bin-client:${secret}`).toString('base64');
    const quoted = [
      JSON.stringify(secret),
      encodeURIComponent(secret),
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
      `Authorization: Basic ${basic}`,
    ];
    const r = recorder();
    const code = await runSweepJob<Database>({
      kit: () => {
        throw new Error(`the service refused ${quoted.join(' | ')}`);
      },
      argv: ['--once'],
      env: { VERIFY_CLIENT_SECRET: secret },
      print: r.print,
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.ConfigError);
    const [line] = r.parsed() as { message: string }[];
    expect(line?.message).toContain('the service refused');
    // The middle of each form (what the secret alone decides), in the printed line and in its message.
    const printed = `${r.out.join('\n')}\n${line?.message}`;
    const leaked = [secret, ...quoted.map((q) => q.replace(/^Authorization: Basic /, ''))].filter((form) =>
      printed.includes(form.slice(4, -4)),
    );
    expect(leaked).toEqual([]);
  });

  it("an environment secret read from a file with its newline: a factory's error quoting it trimmed never shows it", async () => {
    const secret = `job-secret-${randomBytes(9).toString('hex')}`;
    const r = recorder();
    const code = await runSweepJob<Database>({
      // As the kit asks (it refuses surrounding whitespace): the configuration trims what it read.
      kit: (env) => {
        throw new Error(`the service refused ${env.VERIFY_CLIENT_SECRET?.trim() ?? ''}`);
      },
      argv: ['--once'],
      env: { VERIFY_CLIENT_SECRET: `${secret}\n` },
      print: r.print,
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.ConfigError);
    expect(r.out.join('\n')).toContain('the service refused');
    expect(r.out.join('\n')).not.toContain(secret);
  });

  it('a kit factory that throws an object without a prototype is a configuration error, exit 1', async () => {
    const r = recorder();
    const code = await runSweepJob<Database>({
      kit: () => {
        throw Object.create(null);
      },
      argv: ['--once'],
      env: {},
      print: r.print,
      handleSignals: false,
    });
    expect(code).toBe(SweepJobExitCode.ConfigError);
    expect(r.parsed()).toEqual([{ event: 'sweep_config_error', message: '[object Object]' }]);
  });

  it('a kit factory that never settles is a configuration error once stopTimeoutMs has passed, exit 1', async () => {
    const r = recorder();
    const began = performance.now();
    const code = await within(
      5_000,
      runSweepJob<Database>({
        kit: () => new Promise<never>(() => {}),
        argv: ['--once'],
        env: {},
        print: r.print,
        handleSignals: false,
        stopTimeoutMs: 200,
      }),
    );
    expect(code).toBe(SweepJobExitCode.ConfigError);
    expect(performance.now() - began).toBeLessThan(1_000);
    expect(r.parsed()).toEqual([
      { event: 'sweep_config_error', message: expect.stringContaining('did not finish within 200 ms') },
    ]);
  });

  it('a kit its factory builds after stopTimeoutMs is closed when it comes, store and all', async () => {
    const closed: string[] = [];
    const lateKit = {
      close: async () => void closed.push('kit'),
      store: { close: async () => void closed.push('store'), releaseClaims: async () => 0 },
    } as unknown as SweepJobKit<Database>;
    const code = await runSweepJob<Database>({
      kit: () => new Promise((resolve) => setTimeout(() => resolve(lateKit), 400)),
      argv: ['--once'],
      env: {},
      print: recorder().print,
      handleSignals: false,
      stopTimeoutMs: 200,
    });
    expect(code).toBe(SweepJobExitCode.ConfigError);
    expect(closed).toEqual([]);
    await waitFor(() => closed.length === 2, 5000, 'the late kit to be closed');
    expect(closed).toEqual(['kit', 'store']);
  });

  it('a stop while the kit factory is still building is heard at once, and the job ends within stopTimeoutMs of it', async () => {
    const r = recorder();
    const stop = new AbortController();
    let building = false;
    const job = runSweepJob<Database>({
      kit: () => {
        building = true;
        return new Promise<never>(() => {});
      },
      argv: ['--loop'],
      env: {},
      print: r.print,
      handleSignals: false,
      signal: stop.signal,
      stopTimeoutMs: 200,
    });
    await waitFor(() => building, 5000, 'the factory to be called');
    stop.abort();
    expect(r.parsed()).toEqual([{ event: 'sweep_stopping', signal: 'abort' }]);
    const stoppedAt = performance.now();
    // Never built, so there is nothing to run: the factory's deadline ends the job.
    expect(await within(5_000, job)).toBe(SweepJobExitCode.ConfigError);
    expect(performance.now() - stoppedAt).toBeLessThan(1_000);
  });

  it('a print that throws or rejects loses its lines, never the run: --once still fulfils and exits 0', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const prints: ((line: string) => void)[] = [
        () => {
          throw new Error('stdout closed');
        },
        (() => Promise.reject(new Error('log shipper down'))) as unknown as (line: string) => void,
      ];
      for (const print of prints) {
        const each = await openBench();
        try {
          const [verified] = await each.createAttempts(1);
          await emu.control.completeSession(verified!.sessionId, 'verified');
          const job = { kit: jobKit(each.deps), argv: ['--once'], env: {}, print, handleSignals: false };
          expect(await runSweepJob(job)).toBe(SweepJobExitCode.Ok);
          expect((await each.attempt(verified!.state)).outcome).toBe('fulfilled');
        } finally {
          await each.close();
        }
      }
      // A rejection nobody handled is reported on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('loops at --interval-seconds, one line per run, until stopped; then exits 0', async () => {
    const clock = createTestClock();
    b = await openBench(clock.now);
    const [attempt] = await b.createAttempts(1);
    const r = recorder();
    const stop = new AbortController();
    const job = runSweepJob({
      kit: jobKit(b.deps),
      argv: ['--interval-seconds', '0.05'],
      env: {},
      print: r.print,
      handleSignals: false,
      signal: stop.signal,
    });
    await waitFor(() => r.out.length >= 1, 5000, 'a first run');
    await emu.control.completeSession(attempt!.sessionId, 'verified');
    // The attempt is due again 4.5 min later on the sweep's clock: a later run there fulfils it.
    await clock.shifted(DUE_AGAIN_MS, () =>
      waitFor(() => countEffects(b.store.db) === 1, 5000, 'a later run to fulfil it'),
    );
    await waitFor(() => r.out.length >= 3, 5000, 'a third run');
    stop.abort();
    expect(await job).toBe(SweepJobExitCode.Ok);
    const lines = r.parsed();
    const runs = lines.filter((l) => l.event === 'sweep');
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const l of runs)
      expect(l).toMatchObject({ mode: 'loop', claimed: expect.any(Number), durationMs: expect.any(Number) });
    expect(runs.reduce((n, l) => n + Number(l.fulfilled), 0)).toBe(1);
  });

  it('as a real process: --once prints one line and exits 0; unreachable exits 2; SIGTERM stops a loop with exit 0', async () => {
    b = await openBench();
    const attempts = await b.createAttempts(2);
    await emu.control.completeSession(attempts[0]!.sessionId, 'verified');
    const env = {
      SWEEP_DB: b.path,
      VERIFY_BASE_URL: emu.url,
      VERIFY_CLIENT_ID: CLIENT_ID,
      VERIFY_CLIENT_SECRET: CLIENT_SECRET,
    };

    const once = await spawnSweepProcess(['--once'], env).done;
    expect(once.code, once.stderr).toBe(0);
    expect(jsonLines(once.stdout)).toEqual([
      expect.objectContaining({ event: 'sweep', claimed: 2, fulfilled: 1, pending: 1 }),
    ]);
    expect(once.stdout + once.stderr).not.toContain(CLIENT_SECRET);

    // The pending one is due again 4.5 min later: this process's clock runs that far ahead.
    const down = await spawnSweepProcess(['--once'], {
      ...env,
      VERIFY_BASE_URL: `http://127.0.0.1:${await freePort()}`,
      SWEEP_CLOCK_OFFSET_MS: String(DUE_AGAIN_MS),
    }).done;
    expect(down.code, down.stderr).toBe(2);
    expect(jsonLines(down.stdout)).toEqual([
      expect.objectContaining({ claimed: 1, errors: 1, serviceReachable: false }),
    ]);

    const bad = await spawnSweepProcess(['--once'], { ...env, VERIFY_CLIENT_SECRET: '' }).done;
    expect(bad.code).toBe(1);
    expect(jsonLines(bad.stdout)).toEqual([
      { event: 'sweep_config_error', message: expect.stringMatching(/clientSecret/) },
    ]);

    const loop = spawnSweepProcess(['--interval-seconds', '0.05'], env);
    let seen = '';
    loop.child.stdout!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    await waitFor(() => jsonLines(seen).filter((l) => l.event === 'sweep').length >= 2, 15_000, 'two loop runs');
    loop.child.kill('SIGTERM');
    const stopped = await loop.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    const lines = jsonLines(stopped.stdout);
    expect(lines).toContainEqual({ event: 'sweep_stopping', signal: 'SIGTERM' });
    expect(stopped.stdout).not.toContain(CLIENT_SECRET);
  });

  it('as a real process: a second SIGTERM, while the first waits on a read that never answers, ends the process at once by SIGTERM, saying its claims lapse', async () => {
    b = await openBench();
    await b.createAttempts(1);
    // A service that takes the connection and never answers: the run's status read stays in flight.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const loop = spawnSweepProcess(['--loop'], {
        SWEEP_DB: b.path,
        VERIFY_BASE_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        VERIFY_CLIENT_ID: CLIENT_ID,
        VERIFY_CLIENT_SECRET: CLIENT_SECRET,
        SWEEP_CLIENT_HEADERS_MS: '60000',
      });
      let seen = '';
      loop.child.stdout!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
      await waitFor(() => sockets.length > 0, 15_000, 'the status read');
      loop.child.kill('SIGTERM');
      await waitFor(() => seen.includes('sweep_stopping'), 5_000, 'the stopping line');
      loop.child.kill('SIGTERM');
      // The first alone waits up to its 10 s stop timeout for the read, then releases and closes.
      const ended = await within(3_000, loop.done);
      expect(ended.signal, ended.stderr).toBe('SIGTERM');
      expect(jsonLines(ended.stdout)).toEqual([
        { event: 'sweep_stopping', signal: 'SIGTERM' },
        {
          event: 'sweep_stopped',
          signal: 'SIGTERM',
          reason: 'a second SIGTERM: ended at once; could not release claims; they lapse with the lease',
        },
      ]);
      expect(ended.stdout + ended.stderr).not.toContain(CLIENT_SECRET);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('reads --nice and SWEEP_NICE (default 10) and refuses a value outside 0-19, saying the range', () => {
    expect(parseJobConfig([], {}, undefined).nice).toBe(DEFAULT_SWEEP_NICE);
    expect(parseJobConfig(['--nice', '0'], { SWEEP_NICE: '5' }, undefined).nice).toBe(0);
    expect(parseJobConfig([], { SWEEP_NICE: '5' }, undefined).nice).toBe(5);
    for (const bad of ['20', 'low'])
      expect(() => parseJobConfig(['--nice', bad], {}, undefined)).toThrow(/--nice must be a nice value from 0/);
    expect(() => parseJobConfig([], { SWEEP_NICE: '-1' }, undefined)).toThrow(/SWEEP_NICE must be a nice value/);
  });

  it('as a real process lowers its CPU priority to nice 10 by default, or to --nice; 0 keeps it', async () => {
    b = await openBench();
    const env = {
      SWEEP_DB: b.path,
      VERIFY_BASE_URL: emu.url,
      VERIFY_CLIENT_ID: CLIENT_ID,
      VERIFY_CLIENT_SECRET: CLIENT_SECRET,
      SWEEP_REPORT_PRIORITY: '1',
    };
    const priorityOf = async (args: string[], extra: Record<string, string>) => {
      const run = await spawnSweepProcess(['--once', ...args], { ...env, ...extra }).done;
      expect(run.code, run.stderr).toBe(0);
      return jsonLines(run.stdout).find((l) => l.event === 'priority')?.nice;
    };
    const own = getPriority();
    expect(await priorityOf([], { SWEEP_NICE: '' })).toBe(Math.max(own, DEFAULT_SWEEP_NICE));
    expect(await priorityOf(['--nice', '15'], {})).toBe(Math.max(own, 15));
    expect(await priorityOf([], { SWEEP_NICE: '0' })).toBe(own);
  });
});
