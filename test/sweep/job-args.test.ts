/**
 * The sweep job's arguments as an operator types them (parseJobConfig, pure): a flag given twice
 * is refused rather than settled by keeping the last; a bad value is reported as the flag (or the
 * SWEEP_* variable) that was typed, in its own unit, with a good value to copy; a mistake shows
 * the usage the job was given, which names the real command and its flags.
 */
import { describe, expect, it } from 'vitest';
import { isKitError } from '../../middleware/errors.ts';
import { NOT_REPEATED } from '../../middleware/numbers/mask-number.ts';
import { parseJobConfig } from '../../middleware/sweep/sweep-job-args.ts';

/** The message parseJobConfig refuses `argv` and `env` with (it fails the test when it accepts them). */
function refusal(argv: string[], env: Record<string, string> = {}, usage?: string): string {
  try {
    parseJobConfig(argv, env, undefined, usage);
  } catch (error) {
    if (isKitError(error)) return error.message;
    throw error;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

describe('the sweep job refuses a flag given twice', () => {
  it.each([
    [['--once', '--batch-size', '5', '--batch-size', '7'], '--batch-size'],
    [['--once', '--batch-size=5', '--batch-size', '7'], '--batch-size'],
    [['--once', '--lease-seconds', '30', '--lease-seconds=60'], '--lease-seconds'],
    [['--loop', '--interval-seconds', '5', '--interval-seconds', '5'], '--interval-seconds'],
    [['--once', '--concurrency', '2', '--concurrency', '8'], '--concurrency'],
    [['--once', '--nice', '0', '--nice', '19'], '--nice'],
  ])('%j: names %s and says to give it once', (argv, flag) => {
    expect(refusal(argv)).toContain(`${flag} given twice: give it once.`);
  });

  it('takes each flag given once, and a flag that takes no value repeated', () => {
    const config = parseJobConfig(['--once', '--once', '--batch-size', '5', '--lease-seconds=30'], {}, undefined);
    expect(config.sweep).toMatchObject({ batchSize: 5, leaseMs: 30_000 });
  });
});

describe('a bad value is reported as the flag or variable typed, in its unit, with a good value', () => {
  it.each([
    [
      ['--lease-seconds', '0.5'],
      '--lease-seconds must be a number of seconds from 1 to 86400, e.g. --lease-seconds 120; got "0.5".',
    ],
    [
      ['--lease-seconds', '100000'],
      '--lease-seconds must be a number of seconds from 1 to 86400, e.g. --lease-seconds 120; got "100000".',
    ],
    [['--batch-size', '0'], '--batch-size must be a whole number from 1 to 1000, e.g. --batch-size 50; got "0".'],
    [['--batch-size', '5000'], '--batch-size must be a whole number from 1 to 1000, e.g. --batch-size 50; got "5000".'],
    [['--concurrency', '100'], '--concurrency must be a whole number from 1 to 64, e.g. --concurrency 4; got "100".'],
    [
      ['--time-budget-seconds', '0.05'],
      '--time-budget-seconds must be a number of seconds from 0.1 to 86400, e.g. --time-budget-seconds 60; got "0.05".',
    ],
    [
      ['--max-reads-per-second', '2000000'],
      '--max-reads-per-second must be a positive number of status reads a second, at most 1000000, e.g. --max-reads-per-second 200; got a value not repeated here, as it may be a phone number.',
    ],
    [
      ['--interval-seconds', '0.001'],
      '--interval-seconds must be a number of seconds from 0.01 to 2147483, e.g. --interval-seconds 60; got "0.001".',
    ],
  ])('%j', (flags, message) => {
    const said = refusal(['--loop', ...flags]);
    expect(said).toBe(`sweep job: ${message}`);
    // The kit's option names and milliseconds are not what the operator typed.
    expect(said).not.toMatch(/leaseMs|batchSize|timeBudgetMs|maxReadsPerSecond|intervalMs|\{ /);
  });

  it.each([
    [
      { SWEEP_LEASE_SECONDS: '0.5' },
      'SWEEP_LEASE_SECONDS must be a number of seconds from 1 to 86400, e.g. SWEEP_LEASE_SECONDS=120; got "0.5".',
    ],
    [
      { SWEEP_CONCURRENCY: '500' },
      'SWEEP_CONCURRENCY must be a whole number from 1 to 64, e.g. SWEEP_CONCURRENCY=4; got "500".',
    ],
    [
      { SWEEP_BATCH_SIZE: 'lots' },
      'SWEEP_BATCH_SIZE must be a whole number from 1 to 1000, e.g. SWEEP_BATCH_SIZE=50; got "lots".',
    ],
  ])('%j', (env, message) => {
    expect(refusal(['--once'], env)).toBe(`sweep job: ${message}`);
  });

  it("keeps the kit's option names for the defaults a caller gives in code", () => {
    expect(() => parseJobConfig(['--once'], {}, { leaseMs: 500 })).toThrow(/`leaseMs` must be an integer from 1000/);
  });

  it('takes the ends of each range', () => {
    const low = parseJobConfig(
      ['--once', '--lease-seconds', '1', '--batch-size', '1', '--concurrency', '1', '--time-budget-seconds', '0.1'],
      {},
      undefined,
    );
    expect(low.sweep).toMatchObject({ leaseMs: 1000, batchSize: 1, concurrency: 1, timeBudgetMs: 100 });
    const high = parseJobConfig(
      [
        '--once',
        '--lease-seconds',
        '86400',
        '--batch-size',
        '1000',
        '--concurrency',
        '64',
        '--max-reads-per-second',
        '1000000',
      ],
      {},
      undefined,
    );
    expect(high.sweep).toMatchObject({ leaseMs: 86_400_000, batchSize: 1000, concurrency: 64, maxReadsPerSecond: 1e6 });
  });
});

describe('a mistake shows the usage the job was given', () => {
  const usage = 'usage: hosted-sms-verify-kit sweep (--once | --loop) --config FILE [--batch-size N]';

  it('an unknown flag: its name, then that usage', () => {
    expect(refusal(['--once', '--bogus'], {}, usage)).toBe(`sweep job: Unknown option '--bogus'. ${usage}`);
  });

  it('by default, the flags only, under no made-up command name', () => {
    const said = refusal(['--once', '--bogus']);
    expect(said).not.toContain('sweep-job');
    for (const flag of ['--once', '--loop', '--interval-seconds N', '--batch-size N', '--concurrency N']) {
      expect(said).toContain(flag);
    }
    for (const flag of ['--time-budget-seconds N', '--lease-seconds N', '--max-reads-per-second N', '--nice N']) {
      expect(said).toContain(flag);
    }
  });
});

describe('a phone number typed where a setting goes is never repeated (the job prints to its log)', () => {
  it.each([
    [['--once', '--batch-size', '+447400123456'], '--batch-size must be a whole number'],
    [['--once', '--lease-seconds=447400123456'], '--lease-seconds must be a number of seconds'],
    [['--once', '+447400123456'], 'Unexpected argument'],
    [['--once', '--447400123456'], 'Unknown option'],
    [['--once', '--time-budget-seconds', '+44 7400 123456'], '--time-budget-seconds must be a number of seconds'],
  ])('%j: refused, saying %s, without the number', (argv, said) => {
    const message = refusal(argv);
    expect(message).toContain(said);
    expect(message).toContain(NOT_REPEATED);
    expect(message).not.toMatch(/7400/);
  });

  it('in a SWEEP_* variable', () => {
    const message = refusal(['--once'], { SWEEP_CONCURRENCY: '07400 123456' });
    expect(message).toContain(
      `SWEEP_CONCURRENCY must be a whole number from 1 to 64, e.g. SWEEP_CONCURRENCY=4; got ${NOT_REPEATED}.`,
    );
    expect(message).not.toMatch(/7400/);
  });
});
