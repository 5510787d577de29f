/**
 * The kit's default logger writes to stderr, which a scheduled sweep job sends to the same file as
 * its JSON lines (the crontab example's `2>&1`). An error quoting the database URL, or a secret the
 * environment holds (a store's or an action's own message), was hidden in the JSON line and shown
 * in full on the log line beside it. No line of the default logger shows either now, and an error
 * described for any logger (a pino the app gives) never carries a URL's password.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createVerificationKit } from '../../middleware/create-kit.ts';
import { defaultLogger, describeError } from '../../middleware/logger.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { waitFor } from '../support/wait-for.ts';

const DATABASE_PASSWORD = 'Hunter2Password';
const DATABASE_URL = `postgres://app:${DATABASE_PASSWORD}@db.internal:5432/app`;
const ENV_PASSWORD = 'AnotherPw12345';
const failure = () => new Error(`could not reach ${DATABASE_URL} (as app, password ${ENV_PASSWORD})`);

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("an error quoting the database URL and the environment's password", () => {
  it('described for any logger: the URL without its password', () => {
    const { message } = describeError(failure());
    expect(message).toBe(
      `could not reach postgres://app:[redacted]@db.internal:5432/app (as app, password ${ENV_PASSWORD})`,
    );
  });

  it("on the default logger's line: neither the URL's password nor the environment's secret", () => {
    const lines: string[] = [];
    const logger = defaultLogger({ PGPASSWORD: ENV_PASSWORD }, (_level, line) => lines.push(line));
    logger.error({ err: describeError(failure()), note: `pw ${ENV_PASSWORD} at ${DATABASE_URL}` }, 'sweep run failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('err.message="could not reach postgres://app:[redacted]@db.internal:5432/app');
    expect(lines[0]).not.toContain(DATABASE_PASSWORD);
    expect(lines[0]).not.toContain(ENV_PASSWORD);
  });

  it('a sweep worker of a kit given no logger, whose store fails so: the stderr line names the failure, never either secret', async () => {
    vi.stubEnv('NODE_ENV', 'development');
    vi.stubEnv('VERIFY_KIT_LOG', '');
    vi.stubEnv('PGPASSWORD', ENV_PASSWORD);
    const printed: string[] = [];
    for (const level of ['info', 'warn', 'error'] as const) {
      vi.spyOn(console, level).mockImplementation((line: unknown) => void printed.push(String(line)));
    }
    const sqlite = createSqliteStore({ database: ':memory:' });
    const store = new Proxy(sqlite, {
      get(target, key) {
        if (key === 'claimDueAttempts') return () => Promise.reject(failure());
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const kit = createVerificationKit({
      baseUrl: 'https://verify.example.com',
      clientId: 'log-client',
      clientSecret: 'log-secret-0123456789',
      returnUrl: 'https://app.example.com/verify/return',
      store,
      resolveUser: () => null,
      routes: { start: false, landing: false },
      actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
    });
    const worker = kit.startSweepWorker({ intervalMs: 60_000 });
    try {
      await waitFor(() => printed.some((line) => line.includes('sweep run failed')), 5_000, 'the failed run logged');
    } finally {
      await worker.stop();
      await kit.close();
      await sqlite.close();
    }
    const failed = printed.find((line) => line.includes('sweep run failed'));
    expect(failed).toContain('could not reach postgres://app:[redacted]@db.internal:5432/app');
    expect(printed.join('\n')).not.toContain(DATABASE_PASSWORD);
    expect(printed.join('\n')).not.toContain(ENV_PASSWORD);
  });
});
