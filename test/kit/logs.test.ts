/**
 * Logs a person can use. With no logger, a kit in development prints one line per start, landing,
 * outcome and sweep run, a first fulfilment and a replay reading differently; in production (and
 * under test) it prints nothing unless VERIFY_KIT_LOG asks. The service's refusals at start are
 * logged at error level with the fix. No line carries the client secret or a handoff.
 */
import express from 'express';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createConsoleLogger, createVerificationKit, type VerificationKitOptions } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { defaultLogger, formatLogLine, MAX_LOG_LINE } from '../../middleware/logger.ts';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { serviceRefusalFix } from '../../middleware/routes/service-refusal.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startTestEmulator, WEB_CLIENT, type TestEmulator } from '../support/emulator.ts';
import { newSeen } from '../support/seen.ts';

describe('the default logger', () => {
  const printed = (env: NodeJS.ProcessEnv): string[] => {
    const lines: string[] = [];
    defaultLogger(env, (_level, line) => lines.push(line)).info({ sessionId: 's1' }, 'verification started');
    return lines;
  };

  it('prints in development (NODE_ENV unset or development) and stays quiet in production and under test', () => {
    expect(printed({})).toEqual(['[verify-kit] verification started sessionId=s1']);
    expect(printed({ NODE_ENV: 'development' })).toHaveLength(1);
    expect(printed({ NODE_ENV: 'production' })).toEqual([]);
    expect(printed({ NODE_ENV: 'test' })).toEqual([]);
  });

  it('VERIFY_KIT_LOG=console turns it on in production; VERIFY_KIT_LOG=off silences development', () => {
    expect(printed({ NODE_ENV: 'production', VERIFY_KIT_LOG: 'console' })).toHaveLength(1);
    expect(printed({ NODE_ENV: 'production', VERIFY_KIT_LOG: '1' })).toHaveLength(1);
    expect(printed({ VERIFY_KIT_LOG: 'off' })).toEqual([]);
  });

  it('one line: the level for warn and error, the message, then key=value (an error one level deep, text quoted)', () => {
    expect(formatLogLine('info', { route: 'landing', replayed: false }, 'verification fulfilled')).toBe(
      '[verify-kit] verification fulfilled route=landing replayed=false',
    );
    expect(
      formatLogLine(
        'error',
        { err: { code: 'service_rejected', message: 'was refused: 401' }, skipped: undefined },
        'x',
      ),
    ).toBe('[verify-kit] ERROR x err.code=service_rejected err.message="was refused: 401"');
  });

  it('a value with control characters (a service echoing terminal escapes) is printed escaped, never raw', () => {
    const line = formatLogLine('warn', {
      err: { message: 'refused: 400 \u001b[2J\u001b[31mfake\u009b0m' },
      reason: 'a\u0007b',
      note: 'c\u007fd',
    });
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(line).toContain('err.message="refused: 400 \\u001b[2J\\u001b[31mfake\\u009b0m"');
    expect(line).toContain('reason="a\\u0007b"');
    expect(line).toContain('note="c\\u007fd"');
  });
});

describe("the default logger's line of an error of megabytes", () => {
  it('is cut once redacted, saying how much was left out (a log keeps no line of megabytes whole)', () => {
    const lines: string[] = [];
    const secret = 'line-cut-secret-0123456789';
    const logger = defaultLogger({ VERIFY_CLIENT_SECRET: secret }, (_level, line) => lines.push(line));
    // The secret across the cut: cut first, its start would escape the redaction.
    const head = '[verify-kit] ERROR sweep run failed err.message=';
    const message = `${'z'.repeat(MAX_LOG_LINE - head.length - 5)}${secret}${'z'.repeat(5_000_000)}`;
    logger.error({ err: { message } }, 'sweep run failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThan(MAX_LOG_LINE + 100);
    expect(lines[0]).toMatch(/^\[verify-kit\] ERROR sweep run failed err\.message=z+\[reda… \(\d+ more characters\)$/);
    expect(lines[0]).not.toContain(secret.slice(0, 5));
  });
});

describe('a kit given no logger, in development', () => {
  let app: TestApp;
  const lines: string[] = [];
  const seen = newSeen();

  beforeAll(async () => {
    vi.stubEnv('NODE_ENV', 'development');
    vi.stubEnv('VERIFY_KIT_LOG', '');
    for (const level of ['info', 'warn', 'error'] as const) {
      vi.spyOn(console, level).mockImplementation((line: unknown) => {
        lines.push(String(line));
      });
    }
    app = await startTestApp({ kit: { logger: undefined } });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    await app?.close();
  });

  const linesAbout = (sessionId: string) => lines.filter((line) => line.includes(`sessionId=${sessionId}`));

  it('prints the start, the landing as a first fulfilment, and a reload as a replay', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const handoff = await alice.start('grant_badge');
    const { sessionId } = await app.latestAttempt();
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId });
    expect((await alice.request(location)).status).toBe(303);
    expect((await alice.request(location)).status).toBe(303);
    expect(app.grants(sessionId)).toBe(1);

    const about = linesAbout(sessionId);
    expect(about).toHaveLength(3);
    expect(about[0]).toMatch(/^\[verify-kit\] verification started route=start action=grant_badge sessionId=/);
    expect(about[1]).toMatch(/^\[verify-kit\] verification fulfilled: first fulfilment, the action ran route=landing /);
    expect(about[1]).toContain('fulfilment=first');
    expect(about[2]).toMatch(/^\[verify-kit\] verification already fulfilled: replay .* route=landing /);
    expect(about[2]).toContain('fulfilment=replay');
    // Rule: the secret only in the Authorization header, the handoff only in a request body.
    expect(lines.join('\n')).not.toContain(app.secret);
    expect(lines.join('\n')).not.toContain(handoff.handoff);
  });

  it('prints what the sweep fulfilled (a closed tab) and one line for the run', async () => {
    const bob = await app.agent(seen).signIn('bob');
    const handoff = await bob.start('grant_badge');
    const { sessionId } = await app.latestAttempt();
    await app.emulator.control.completeSession(sessionId, 'verified');
    const before = lines.length;
    // The sweep reads an attempt nobody landed 3 minutes after its start, on the kit's clock.
    const report = await app.clock.shifted(4 * 60_000, () => app.kit.runSweep());
    expect(report.fulfilled).toBe(1);
    expect(app.grants(sessionId)).toBe(1);

    const printedNow = lines.slice(before);
    expect(printedNow.filter((line) => line.includes(`sessionId=${sessionId}`))).toEqual([
      expect.stringMatching(
        /^\[verify-kit\] verification fulfilled: first fulfilment.* route=sweep .*fulfilment=first/,
      ),
    ]);
    expect(printedNow.filter((line) => line.includes('sweep run:'))).toEqual([
      expect.stringMatching(
        /^\[verify-kit\] sweep run: 1 fulfilled, 0 failed, 0 still pending, 0 expired \(1 claimed, /,
      ),
    ]);
    expect(lines.join('\n')).not.toContain(handoff.handoff);
  });
});

describe('the service refusing a start is logged at error level, with the fix', () => {
  let emulator: TestEmulator;
  const SECRET_WRONG = 'wrong-secret-5f4e3d2c1b';

  beforeAll(async () => {
    emulator = await startTestEmulator();
  });
  afterAll(async () => {
    await emulator?.close();
  });
  const stores: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  /** One start through a kit built with `overrides`; returns its status and the printed lines. */
  async function startWith(overrides: Partial<VerificationKitOptions>) {
    const lines: { level: string; line: string }[] = [];
    const store = createSqliteStore({ database: ':memory:' });
    stores.push(store);
    const kit = createVerificationKit({
      baseUrl: emulator.url,
      clientId: WEB_CLIENT.clientId,
      clientSecret: WEB_CLIENT.secret,
      returnUrl: WEB_CLIENT.returnUrl,
      store,
      actions: [{ name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {} }],
      resolveUser: () => ({ userRef: 'user-1', destination: '+15551234567' }),
      csrf: { dangerouslyReplaceTokenCheck: () => true },
      dangerouslyDisableStartLimits: true,
      client: { retry: { maxAttempts: 1 } },
      logger: createConsoleLogger((level, line) => lines.push({ level, line })),
      ...overrides,
    });
    const app = express();
    app.use(kit.router);
    const response = await request(app).post('/verify/start').type('form').send({ action: 'grant_badge' });
    await kit.close();
    return { status: response.status, body: response.text, lines };
  }

  it('a wrong secret (401): check the client id and secret, never quoting the secret', async () => {
    const { status, body, lines } = await startWith({ clientSecret: SECRET_WRONG });
    expect(status).toBe(502);
    expect(lines).toEqual([
      {
        level: 'error',
        line: expect.stringMatching(
          /^\[verify-kit\] ERROR POST \/session was refused: 401 unauthorized\. Fix: the service refused the client credentials\. Check that clientId and clientSecret are the pair the portal issued for this app, not swapped/,
        ),
      },
    ]);
    expect(JSON.stringify(lines) + body).not.toContain(SECRET_WRONG);
  });

  it('an unregistered returnUrl (invalid_return_url): register that exact URL or use the registered one', async () => {
    const returnUrl = 'http://localhost:3999/verify/return/';
    const { status, lines } = await startWith({ returnUrl });
    expect(status).toBe(502);
    expect(lines).toEqual([
      {
        level: 'error',
        line: expect.stringContaining(
          `invalid_return_url. Fix: returnUrl "${returnUrl}" is not registered for this client. Register exactly this URL`,
        ),
      },
    ]);
  });

  it('a validation error is told by its code, whatever status the service gives it (the interface states none)', async () => {
    const returnUrl = 'http://localhost:3999/verify/return/';
    for (const validationStatus of [401, 404]) {
      await emulator.control.injectFaults({ validationStatus });
      try {
        const { lines } = await startWith({ returnUrl });
        const printed = lines.map((entry) => entry.line).join('\n');
        expect(printed, String(validationStatus)).toContain(
          `${validationStatus} invalid_return_url. Fix: returnUrl "${returnUrl}" is not registered for this client.`,
        );
        expect(printed, String(validationStatus)).not.toMatch(/client credentials|base address/);
      } finally {
        await emulator.control.reset();
      }
    }
    // A refusal of the number under 404 is no sign of a wrong baseUrl either.
    const refused = new KitError(KitErrorCode.ServiceRejected, 'refused', {
      serviceStatus: 404,
      serviceErrorCode: 'destination_required',
    });
    expect(serviceRefusalFix({ baseUrl: emulator.url, returnUrl }, refused)).toBeUndefined();
  });

  it('a baseUrl ending in /session (404): the base address, which the fix names', async () => {
    const { status, lines } = await startWith({ baseUrl: `${emulator.url}/session` });
    expect(status).toBe(502);
    expect(lines).toEqual([
      {
        level: 'error',
        line: expect.stringContaining(
          `Fix: the service answered 404 at ${emulator.url}/session/session. baseUrl must be the service's base address (the kit adds /session itself), not an endpoint. Use "${emulator.url}".`,
        ),
      },
    ]);
  });
});
