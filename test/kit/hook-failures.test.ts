/**
 * The integrator's callbacks are outside the kit's trust: one that throws (synchronously or by a
 * rejected promise) never kills the process, never shows a stack trace and never leaves an
 * unhandled rejection. The kit's error path falls back to its built-in English page and logs the
 * integrator's error with its message. Start limits of the app's own that never settle refuse the
 * start within `hookTimeouts.limits` instead of holding it open.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Request } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createStartLimits, type StartBudgetCounter } from '../../middleware/index.ts';
import { englishMessages } from '../../middleware/pages/messages.ts';
import type { VerificationKitOptions } from '../../middleware/options/options.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

const seen = newSeen();
const unhandled = watchUnhandledRejections();

/** A callback that fails the way `how` says, with a message the log must carry. */
function failing(how: 'sync' | 'async', message: string): () => never {
  return how === 'sync'
    ? () => {
        throw new TypeError(message);
      }
    : ((() => Promise.reject(new TypeError(message))) as unknown as () => never);
}

const STACK_LINE = /\n\s+at [^\n]+:\d+:\d+/;

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  expect(await unhandled.settled()).toEqual([]);
});

async function appWith(kit: Partial<VerificationKitOptions<unknown>>): Promise<TestApp> {
  app = await startTestApp({ kit });
  return app;
}

/** The built-in English error page, with no stack trace and none of the integrator's text. */
function expectBuiltInErrorPage(body: string, secret: string): void {
  expect(body).toContain(`<html lang="en"`);
  expect(body).toContain(englishMessages.error.heading);
  expect(body).not.toMatch(STACK_LINE);
  expect(body).not.toContain(secret);
}

function expectLogged(app: TestApp, message: string): void {
  const lines = app.logs.filter((line) => line.includes(message));
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(line).not.toMatch(/\\n\s+at /);
}

describe.each(['sync', 'async'] as const)('a callback that throws (%s)', (how) => {
  it('locale: an anonymous bad landing gets the built-in English 400 page', async () => {
    const message = `locale broke ${how}`;
    const a = await appWith({ locale: failing(how, message) });
    const answer = await a.agent(seen).land('session_id=x&state=bad');
    expect(answer.status).toBe(400);
    expectBuiltInErrorPage(answer.body, message);
    expectLogged(a, message);
  });

  it('pages.error: a bad landing gets the built-in error page instead', async () => {
    const message = `error page broke ${how}`;
    const a = await appWith({ pages: { error: failing(how, message) } });
    const answer = await a.agent(seen).land('session_id=x&state=bad');
    expect(answer.status).toBe(400);
    expectBuiltInErrorPage(answer.body, message);
    expectLogged(a, message);
  });

  it('pages.startAgain: the built-in start-again page is shown instead', async () => {
    const message = `start-again page broke ${how}`;
    const a = await appWith({ pages: { startAgain: failing(how, message) } });
    const answer = await a.agent(seen).request('/verify/start-again?action=grant_badge');
    expect(answer.status).toBe(200);
    expect(answer.body).toContain(englishMessages.startAgain.heading);
    expect(answer.body).not.toContain(message);
    expectLogged(a, message);
  });

  it('prepare (a plain Error): the built-in 500 page, no stack trace, the message in the log', async () => {
    const message = `prepare broke ${how}`;
    const a = await appWith({
      actions: [
        {
          name: 'grant_badge',
          operationSensitivity: 'normal',
          successPath: '/done',
          prepare: failing(how, message),
          fulfil: () => {},
        },
      ],
    });
    const alice = await a.agent(seen).signIn('alice');
    const answer = await alice.tryStart('grant_badge');
    expect(answer.status).toBe(500);
    expectBuiltInErrorPage(answer.body, message);
    expectLogged(a, message);
    expect(a.errors).toEqual([]);
  });

  it('resolveUser: the built-in 500 page on the start-again page', async () => {
    const message = `resolveUser broke ${how}`;
    const a = await appWith({ resolveUser: failing(how, message) as unknown as (req: Request) => null });
    const answer = await a.agent(seen).request('/verify/start-again?action=grant_badge');
    expect(answer.status).toBe(500);
    expectBuiltInErrorPage(answer.body, message);
    expectLogged(a, message);
  });

  it("messages' retryAfter: a refused start shows the English text instead", async () => {
    const message = `retryAfter broke ${how}`;
    const a = await appWith({
      messages: { en: { retryAfter: failing(how, message) } },
      limits: { perUser: { points: 1, durationSeconds: 600 } },
    });
    const alice = await a.agent(seen).signIn('alice');
    await alice.start('grant_badge');
    const answer = await alice.tryStart('grant_badge');
    expect(answer.status).toBe(429);
    expect(answer.body).toMatch(/Try again in \d+ minutes\./);
    expect(answer.body).not.toContain('[object Promise]');
    expect(answer.body).not.toMatch(STACK_LINE);
    expectLogged(a, message);
  });

  it('limits.consume (a plain Error): the built-in 500 page, the start refused, no session created', async () => {
    const message = `limits broke ${how}`;
    const a = await appWith({ limits: { consume: failing(how, message) } });
    const alice = await a.agent(seen).signIn('alice');
    const answer = await alice.tryStart('grant_badge');
    expect(answer.status).toBe(500);
    expectBuiltInErrorPage(answer.body, message);
    expectLogged(a, message);
    expect((await a.emulator.control.stats()).creates).toBe(0);
  });

  it('beforeCreate (a plain Error): the built-in 500 page, no session created', async () => {
    const message = `beforeCreate broke ${how}`;
    const a = await appWith({ beforeCreate: failing(how, message) });
    const alice = await a.agent(seen).signIn('alice');
    const answer = await alice.tryStart('grant_badge');
    expect(answer.status).toBe(500);
    expectBuiltInErrorPage(answer.body, message);
    expectLogged(a, message);
    expect((await a.emulator.control.stats()).creates).toBe(0);
  });
});

describe('prepare returning what the store cannot keep', () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  it.each([
    ['a BigInt', () => 10n],
    ['an object holding itself', () => cycle],
    ['a function', () => () => 1],
    [
      'an object whose toJSON throws',
      () => ({
        toJSON: () => {
          throw new TypeError('toJSON broke');
        },
      }),
    ],
  ])(
    '%s: the built-in 500 page before any session is created: nothing texted, no budget spent',
    async (_what, returned) => {
      const a = await appWith({
        actions: [
          {
            name: 'grant_badge',
            operationSensitivity: 'normal',
            successPath: '/done',
            prepare: returned as unknown as () => null,
            fulfil: () => {},
          },
        ],
      });
      const alice = await a.agent(seen).signIn('alice');
      const answer = await alice.tryStart('grant_badge');
      expect(answer.status).toBe(500);
      expectBuiltInErrorPage(answer.body, 'JSON');
      expect(await a.emulator.control.stats()).toMatchObject({ creates: 0, smsSent: 0 });
      expectLogged(a, '`prepare` returned');
      expect(await a.attemptCount()).toBe(0);
      const budgets = await a.query<{ n: number | string }>('SELECT count(*) AS n FROM verify_kit_start_budgets');
      expect(Number(budgets[0]?.n)).toBe(0);
    },
  );

  it('a value JSON keeps otherwise (undefined and NaN inside) is stored and handed to fulfil as JSON reads it', async () => {
    const fulfilled: unknown[] = [];
    const a = await appWith({
      actions: [
        {
          name: 'grant_badge',
          operationSensitivity: 'normal',
          successPath: '/done',
          prepare: () => ({ kept: 1, dropped: undefined, notANumber: Number.NaN }) as unknown as null,
          fulfil: (_tx, attempt) => {
            fulfilled.push(attempt.params);
          },
        },
      ],
    });
    const alice = await a.agent(seen).signIn('alice');
    const started = await alice.start('grant_badge');
    await a.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    expect((await alice.landFor(started.sessionId, started.state)).status).toBe(303);
    expect(fulfilled).toEqual([{ kept: 1, notANumber: null }]);
  });
});

describe('start limits of the app’s own that never settle', () => {
  /** A start refused in time: the kit's 500 page, no session, no SMS, the deadline in the log. */
  async function expectRefusedWithinDeadline(a: TestApp): Promise<void> {
    const alice = await a.agent(seen).signIn('alice');
    const began = performance.now();
    const answer = await alice.tryStart('grant_badge', {}, 5_000);
    expect(performance.now() - began).toBeLessThan(3_000);
    expect(answer.status).toBe(500);
    expectBuiltInErrorPage(answer.body, 'did not settle');
    expect((await a.emulator.control.stats()).creates).toBe(0);
    expectLogged(a, 'limits did not settle within 200 ms');
  }

  it('a custom limits.consume: the start is refused within hookTimeouts.limits, never held open or let through', async () => {
    await expectRefusedWithinDeadline(
      await appWith({ limits: { consume: () => new Promise<never>(() => {}) }, hookTimeouts: { limits: 200 } }),
    );
  });

  it("createStartLimits on the app's own counter whose consumeStartBudgets hangs: refused within hookTimeouts.limits", async () => {
    const counter: StartBudgetCounter = { consumeStartBudgets: () => new Promise<never>(() => {}) };
    await expectRefusedWithinDeadline(
      await appWith({
        limits: createStartLimits({ store: counter, destinationKey: 'k'.repeat(32) }),
        hookTimeouts: { limits: 200 },
      }),
    );
  });
});

describe('the process survives', () => {
  it('an anonymous bad landing with a throwing `locale` (req.session.user.lang): answered 400, twice, still running', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../fixtures/throwing-locale-app.ts', import.meta.url))],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const ready = /\{"ready":"([^"]+)"\}/.exec(out)?.[1];
          if (ready !== undefined) resolve(ready);
        });
        child.once('exit', (code) => reject(new Error(`app exited with ${code}: ${stderr}`)));
      });
      for (let i = 0; i < 2; i++) {
        const answer = await fetch(`${url}/verify/return?session_id=x&state=bad`);
        expect(answer.status).toBe(400);
        expect(await answer.text()).toContain(englishMessages.error.heading);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(child.exitCode).toBeNull();
      expect(stderr).not.toMatch(/Unhandled|TypeError/);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('a failure text of the app’s own that cannot be read', () => {
  it('a getter that throws (a lazy translation): the failed landing shows the English title, logged', async () => {
    const message = 'i18n: missing key failures.otp_locked.title';
    const a = await appWith({
      messages: {
        en: {
          failures: {
            otp_locked: {
              get title(): string {
                throw new Error(message);
              },
              text: 'Too many wrong codes, in the app’s words.',
            },
          },
        },
      },
    });
    const alice = await a.agent(seen).signIn('alice');
    await alice.start('grant_badge');
    const row = await a.latestAttempt();
    await a.emulator.control.complete(row.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    const landing = await alice.landFor(row.sessionId, row.state);
    const body = await landing.text();
    expect(landing.status).toBe(200);
    expect(body).toContain(englishMessages.failures.otp_locked.title);
    expect(body).toContain('Too many wrong codes, in the app’s words.');
    expect(body).not.toMatch(STACK_LINE);
    expectLogged(a, message);
  });
});
