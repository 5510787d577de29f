/**
 * Once a request is answered, an error the integrator's code raises later (a step-up guard's
 * `onUnenrolled` that answers or calls next() and then throws or rejects, or rejects after its
 * deadline was answered) changes nothing the user sees: it is logged once, described and without
 * the client secret, and never handed to the app's error handler (which would answer twice,
 * "headers already sent", and whose failure Express prints with its stack) nor to the process.
 */
import type express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { asUserWithoutPhone, expectAnswerCutOff, SCOPES } from '../support/step-up.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

let app: TestApp | undefined;
const unhandled = watchUnhandledRejections();
afterEach(async () => {
  await app?.close();
  app = undefined;
});

type Unenrolled = (req: express.Request, res: express.Response, next: express.NextFunction) => unknown;

interface Seen {
  handler: boolean;
  /** Every call of the app's own error handler, with whether the request had been answered. */
  errorHandler: { message: string; headersSent: boolean }[];
}

/** An app whose /security is guarded with `onUnenrolled`; its guarded handler answers after an await. */
async function appWith(onUnenrolled: Unenrolled, seen: Seen, kit: { errors?: 'next' } = {}): Promise<TestApp> {
  return startTestApp({
    kit: { scopes: [...SCOPES], hookTimeouts: { onUnenrolled: 150 }, ...kit },
    ownRoutes: (routes: express.Express, verificationKit) => {
      routes.get(
        '/security',
        verificationKit.requireRecentVerification({
          scope: 'security',
          maxAge: 600,
          onUnenrolled: onUnenrolled as express.RequestHandler,
        }),
        async (_req, res) => {
          await new Promise((resolve) => setImmediate(resolve));
          seen.handler = true;
          res.send('codes');
        },
      );
      routes.use((error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
        seen.errorHandler.push({ message: String(error), headersSent: res.headersSent });
        if (res.headersSent) {
          next(error);
          return;
        }
        res.status(503).type('html').send('<p>app error page</p>');
      });
    },
  });
}

/** A promise the test settles: the integrator's code fails only once the test saw the answer. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** The log lines that mention `text`, once the late error was logged or reached the app's handler. */
async function lateLines(on: TestApp, seen: Seen, text: string): Promise<string[]> {
  const lines = () => on.logs.filter((line) => line.includes(text));
  await vi.waitFor(() => expect(lines().length + seen.errorHandler.length).toBeGreaterThan(0), { timeout: 3_000 });
  return lines();
}

function expectLoggedOnceOnly(on: TestApp, seen: Seen, lines: string[], text: string): void {
  expect(seen.errorHandler).toEqual([]);
  expect(on.errors).toEqual([]); // nor the error handler after it, nor Express's own (which prints the stack)
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('after the request was answered');
  expect(lines[0]).not.toContain(on.secret);
  expect(lines[0]).not.toMatch(/at .*\.(ts|js):\d+/); // described, no stack
  expect(on.logs.filter((line) => line.includes(text))).toHaveLength(1);
}

describe('an onUnenrolled that fails after the request was answered', () => {
  it('answers (a redirect to enrolment) and then rejects: the redirect stands, the error is logged once, the app’s error handler never hears of it', async () => {
    const seen: Seen = { handler: false, errorHandler: [] };
    const late = gate();
    app = await appWith(async (_req, res) => {
      res.redirect('/enrol');
      await late.opened;
      throw new Error(`audit write failed (${app!.secret})`);
    }, seen);
    await asUserWithoutPhone(app, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(302);
      expect(answer.location).toBe('/enrol');
      late.open();
      const lines = await lateLines(app!, seen, 'audit write failed');
      expectLoggedOnceOnly(app!, seen, lines, 'audit write failed');
      expect(seen.handler).toBe(false);
      expect(await unhandled.settled()).toEqual([]);
      expect((await nobody.request('/security')).status).toBe(302); // the app goes on serving
    });
  });

  it('answers and then throws synchronously: the same, logged once and nothing else', async () => {
    const seen: Seen = { handler: false, errorHandler: [] };
    app = await appWith((_req, res) => {
      res.redirect('/enrol');
      throw new Error('enrolment counter broke');
    }, seen);
    await asUserWithoutPhone(app, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(302);
      const lines = await lateLines(app!, seen, 'enrolment counter broke');
      expectLoggedOnceOnly(app!, seen, lines, 'enrolment counter broke');
      expect(await unhandled.settled()).toEqual([]);
    });
  });

  it('begins an answer and throws before ending it: the answer is cut off (the request never hangs), the error logged once', async () => {
    const seen: Seen = { handler: false, errorHandler: [] };
    app = await appWith((_req, res) => {
      res.status(200).type('html').write('<p>Set up your phone');
      throw new Error('enrolment template broke');
    }, seen);
    await asUserWithoutPhone(app, async (nobody) => {
      await expectAnswerCutOff(nobody, '/security');
      const lines = await lateLines(app!, seen, 'enrolment template broke');
      expectLoggedOnceOnly(app!, seen, lines, 'enrolment template broke');
      expect(await unhandled.settled()).toEqual([]);
    });
  });

  it('calls next() and then throws: the guarded handler’s answer reaches the user, never the kit’s error page over it', async () => {
    const seen: Seen = { handler: false, errorHandler: [] };
    app = await appWith((_req, _res, next) => {
      next();
      throw new Error('enrolment reminder failed');
    }, seen);
    await asUserWithoutPhone(app, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(200);
      expect(answer.body).toBe('codes');
      expect(seen.handler).toBe(true);
      const lines = await lateLines(app!, seen, 'enrolment reminder failed');
      expectLoggedOnceOnly(app!, seen, lines, 'enrolment reminder failed');
      expect(await unhandled.settled()).toEqual([]);
    });
  });
});

describe('an onUnenrolled that rejects after its deadline was answered', () => {
  it('the user had the kit’s error page; the late rejection is logged once, nothing else', async () => {
    const seen: Seen = { handler: false, errorHandler: [] };
    const late = gate();
    app = await appWith(async () => {
      await late.opened;
      throw new Error('enrolment service finally refused');
    }, seen);
    await asUserWithoutPhone(app, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(500);
      late.open();
      const lines = await lateLines(app!, seen, 'enrolment service finally refused');
      expectLoggedOnceOnly(app!, seen, lines, 'enrolment service finally refused');
      expect(seen.handler).toBe(false);
      expect(await unhandled.settled()).toEqual([]);
    });
  });

  it('with errors: "next", the app’s error handler answers once: the late rejection never reaches it a second time', async () => {
    const seen: Seen = { handler: false, errorHandler: [] };
    const late = gate();
    app = await appWith(
      async () => {
        await late.opened;
        throw new Error('enrolment service finally refused');
      },
      seen,
      { errors: 'next' },
    );
    await asUserWithoutPhone(app, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(503);
      expect(seen.errorHandler).toHaveLength(1);
      expect(seen.errorHandler[0]?.message).toContain('onUnenrolled neither answered nor called next()');
      seen.errorHandler.length = 0;
      late.open();
      const lines = await lateLines(app!, seen, 'enrolment service finally refused');
      expectLoggedOnceOnly(app!, seen, lines, 'enrolment service finally refused');
      expect(await unhandled.settled()).toEqual([]);
    });
  });
});

describe('a request hook that rejects after its deadline was answered', () => {
  const HOOK_MS = 150;

  /** A hook that fails, with a reason naming the client secret, only once the test saw the answer. */
  function rejectingLate(opened: Promise<void>, reason: () => string): () => Promise<never> {
    return async () => {
      await opened;
      throw new Error(reason());
    };
  }

  it.each([
    ['resolveUser', 'resolveUser'],
    ['prepare', 'prepare'],
    ['beforeCreate', 'beforeCreate'],
    ['limits.consume', 'limits'],
  ] as const)(
    '%s: the user had the kit’s 500 page at the deadline; the real reason is then logged once, naming the hook',
    async (option, hook) => {
      const seen: Seen = { handler: false, errorHandler: [] };
      const late = gate();
      const rejects = rejectingLate(late.opened, () => `database connection refused (${app!.secret})`);
      const kit =
        option === 'prepare'
          ? {
              actions: [
                {
                  name: 'grant_badge',
                  operationSensitivity: 'normal' as const,
                  successPath: '/done',
                  prepare: rejects,
                  fulfil: () => {},
                },
              ],
            }
          : option === 'limits.consume'
            ? { limits: { consume: rejects } }
            : { [option]: rejects };
      app = await startTestApp({ kit: { ...kit, hookTimeouts: { [hook]: HOOK_MS } } });
      const alice = await app.agent().signIn('alice');
      const answer = await alice.tryStart('grant_badge');
      expect(answer.status).toBe(500);
      expect(app.logs.some((line) => line.includes(`${hook} did not settle within ${HOOK_MS} ms`))).toBe(true);
      late.open();
      const lines = await lateLines(app, seen, 'database connection refused');
      expect(seen.errorHandler).toEqual([]);
      expect(app.errors).toEqual([]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`${hook} rejected after its deadline`);
      expect(lines[0]).not.toContain(app.secret);
      expect(lines[0]).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(await unhandled.settled()).toEqual([]);
    },
  );
});
