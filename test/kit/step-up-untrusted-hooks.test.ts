/**
 * The step-up guard's own callbacks are the integrator's code, outside the kit's trust for
 * liveness: a `bindTo` that hangs answers the kit's error page within its deadline
 * (`hookTimeouts.bindTo`) and runs nothing; an `onUnenrolled` that rejects is answered by the kit
 * and never reaches the process as an unhandled rejection; neither does a text function of its pages.
 * An `onUnenrolled` that neither answers nor calls next() within `hookTimeouts.onUnenrolled` (a
 * promise that never settles, a callback that never fires) gets the kit's error page then, the
 * guarded handler never runs, and one that answers late changes nothing: the app goes on serving.
 * With `errors: 'next'` the app's own error handler answers instead, even a moment later.
 */
import type express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { asUserWithoutPhone, expectAnswerCutOff, SCOPES } from '../support/step-up.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';
import { nextTurn, waitFor } from '../support/wait-for.ts';

let app: TestApp | undefined;
const unhandled = watchUnhandledRejections();
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describeEachAppStore('the step-up guard’s callbacks', (_store, storeOptions) => {
  it('a bindTo that never settles: the request gets the error page within hookTimeouts.bindTo, the handler never runs', async () => {
    let handlerRan = false;
    let bindToCalled = false;
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES], hookTimeouts: { bindTo: 200 } },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get(
          '/accounts/:account/statement',
          kit.requireRecentVerification({
            scope: 'payout',
            maxAge: 300,
            bindTo: () => {
              bindToCalled = true;
              return new Promise<string>(() => {});
            },
          }),
          (_req, res) => {
            handlerRan = true;
            res.send('statement');
          },
        );
      },
    });
    const alice = await app.agent().signIn('alice');
    const began = performance.now();
    const answer = await alice.request('/accounts/acct-1/statement');
    expect(bindToCalled).toBe(true);
    expect(performance.now() - began).toBeLessThan(5_000);
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('statement');
    expect(answer.body).not.toMatch(/at .*\.ts:\d+/); // no stack trace
    expect(handlerRan).toBe(false);
    expect(app.logs.some((line) => line.includes('bindTo did not settle within 200 ms'))).toBe(true);
  });

  it('an onUnenrolled that rejects: the kit answers the request and no rejection reaches the process', async () => {
    let handlerRan = false;
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get(
          '/security',
          kit.requireRecentVerification({
            scope: 'security',
            maxAge: 600,
            onUnenrolled: async () => {
              throw new Error('enrolment page down');
            },
          }),
          (_req, res) => {
            handlerRan = true;
            res.send('codes');
          },
        );
      },
    });
    await asUserWithoutPhone(app!, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(500);
      expect(answer.body).not.toContain('codes');
      expect(answer.body).not.toContain('enrolment page down');
      expect(handlerRan).toBe(false);
      expect(await unhandled.settled()).toEqual([]);
    });
  });

  it("a messages.stepUp.text that rejects: the Confirm it's you page shows the English text, nothing reaches the process", async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        scopes: [...SCOPES],
        messages: {
          en: {
            stepUp: { text: (() => Promise.reject(new Error('no text today'))) as unknown as (n: string) => string },
          },
        },
      },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get('/security', kit.requireRecentVerification({ scope: 'payout', maxAge: 300 }), (_req, res) => {
          res.send('security');
        });
      },
    });
    const alice = await app.agent().signIn('alice');
    const answer = await alice.request('/security');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(
      /To continue, confirm it’s you with a code we text to your number [^<]*11, or with your passkey/,
    );
    expect(answer.body).not.toContain('[object Promise]');
    expect(await unhandled.settled()).toEqual([]);
  });
});

describe('step-up texts of the wrong kind', () => {
  it("a messages.stepUp.text given as a text, and a title given as a function: the Confirm it's you page shows the English ones, each logged", async () => {
    app = await startTestApp({
      kit: {
        scopes: [...SCOPES],
        messages: {
          fr: {
            stepUp: {
              text: 'Nous vous envoyons un code.' as unknown as (n: string) => string,
              title: (() => 'Confirmez') as unknown as string,
            },
          },
        },
      },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get('/security', kit.requireRecentVerification({ scope: 'payout', maxAge: 300 }), (_req, res) => {
          res.send('security');
        });
      },
    });
    const alice = await app.agent().signIn('alice');
    const answer = await alice.request('/security', { headers: { 'accept-language': 'fr' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(
      /To continue, confirm it’s you with a code we text to your number [^<]*11, or with your passkey/,
    );
    expect(answer.body).toContain('<h1>Confirm it’s you</h1>');
    expect(answer.body).not.toContain('=&gt;');
    for (const text of ['stepUp.text', 'stepUp.title']) {
      expect(app.logs.filter((line) => line.includes(`messages: ${text} is not`))).toHaveLength(1);
    }
  });
});

type Unenrolled = (req: express.Request, res: express.Response, next: express.NextFunction) => unknown;

async function appWith(onUnenrolled: Unenrolled, ran: { handler: boolean }) {
  return startTestApp({
    kit: { scopes: [...SCOPES], hookTimeouts: { onUnenrolled: 300 } },
    ownRoutes: (routes: express.Express, kit) => {
      routes.get(
        '/security',
        kit.requireRecentVerification({
          scope: 'security',
          maxAge: 600,
          onUnenrolled: onUnenrolled as express.RequestHandler,
        }),
        (_req, res) => {
          ran.handler = true;
          res.send('codes');
        },
      );
      routes.get('/ping', (_req, res) => res.send('pong'));
    },
  });
}

/**
 * A callback an onUnenrolled sets off (a lookup's, a timer's), run when the test says: once the user
 * has had the kit's answer, so late by construction, where a sleep used to make it late.
 */
function setOff() {
  let callback: (() => void) | undefined;
  return {
    later: (run: () => void) => void (callback = run),
    /** Runs it on a turn of its own, then lets what it set off run. */
    now: async () => {
      setImmediate(callback!);
      await nextTurn();
    },
  };
}

describe('an onUnenrolled that neither answers nor calls next()', () => {
  it.each([
    ['returns a promise that never settles', (() => new Promise<void>(() => {})) as Unenrolled],
    ['waits on a callback that never fires (returns nothing)', (() => undefined) as Unenrolled],
  ])(
    '%s: the user gets the kit’s error page after hookTimeouts.onUnenrolled, the handler never runs',
    async (_what, hung) => {
      const ran = { handler: false };
      app = await appWith(hung, ran);
      await asUserWithoutPhone(app!, async (nobody) => {
        const began = Date.now();
        const answer = await nobody.request('/security');
        expect(Date.now() - began).toBeLessThan(5_000);
        expect(answer.status).toBe(500);
        expect(answer.body).toMatch(/^<!doctype html>/i); // the kit's page, whole
        expect(answer.body).toContain('</html>');
        expect(answer.body).not.toMatch(/at .*\.(ts|js):\d+/);
        expect(ran.handler).toBe(false);
        expect(
          app!.logs.some((line) => line.includes('onUnenrolled neither answered nor called next() within 300 ms')),
        ).toBe(true);
      });
    },
  );

  it('one that answers after the deadline changes nothing: the user had the error page, the app goes on serving', async () => {
    const ran = { handler: false };
    const lookup = setOff();
    app = await appWith((_req, res) => lookup.later(() => res.redirect('/enrol')), ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(500);
      expect(answer.body).toContain('</html>');
      await lookup.now();
      expect((await nobody.request('/ping')).body).toBe('pong');
      expect(ran.handler).toBe(false);
    });
  });

  it('one that begins an answer and never ends it is cut off at hookTimeouts.onUnenrolled: the request never hangs, a later next() runs nothing', async () => {
    const ran = { handler: false };
    let passOn: express.NextFunction | undefined;
    app = await appWith((_req, res, next) => {
      res.status(200).type('html').write('<p>Set up your phone');
      // An enrolment template waiting on a service that never answers; it calls next() much later.
      passOn = next;
      return new Promise<void>(() => {});
    }, ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      await expectAnswerCutOff(nobody, '/security');
      expect(
        app!.logs.filter((line) => line.includes('onUnenrolled began its answer and did not end it within 300 ms')),
      ).toHaveLength(1);
      passOn!();
      await nextTurn();
      expect(ran.handler).toBe(false);
      expect((await nobody.request('/ping')).body).toBe('pong');
    });
  });

  it('one that calls next() after the deadline runs nothing: the user had the error page, the guarded handler never runs', async () => {
    const ran = { handler: false };
    let lateNext = false;
    const lookup = setOff();
    app = await appWith((_req, _res, next) => {
      lookup.later(() => {
        lateNext = true;
        next();
      });
    }, ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(500);
      await lookup.now();
      expect(lateNext).toBe(true);
      expect(ran.handler).toBe(false);
      expect((await nobody.request('/ping')).body).toBe('pong');
    });
  });

  it('one that calls next() after the deadline runs nothing when its client went away before it: the deadline holds without a listener', async () => {
    const ran = { handler: false };
    let lateNext = false;
    const lookup = setOff();
    app = await appWith((_req, _res, next) => {
      lookup.later(() => {
        lateNext = true;
        next();
      });
    }, ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      // The user gives up (closes the tab) 100 ms in, before the deadline.
      const gaveUp = await nobody.request('/security', { timeoutMs: 100 }).catch((error: Error) => error.message);
      expect(gaveUp).toContain('did not answer within 100 ms');
      const cutOff = () =>
        app!.logs.some((line) => line.includes('onUnenrolled neither answered nor called next() within 300 ms'));
      await waitFor(cutOff, 5_000, 'the deadline');
      await lookup.now();
      expect(lateNext).toBe(true);
      expect(ran.handler).toBe(false);
      expect((await nobody.request('/ping')).body).toBe('pong');
    });
  });
});

describe('an onUnenrolled that fails', () => {
  it('one that began its answer, then rejects and calls next() a moment later, runs nothing: its answer is cut off, the guarded handler never runs', async () => {
    const ran = { handler: false };
    let lateNext = false;
    const lookup = setOff();
    app = await appWith(async (_req, res, next) => {
      res.status(200).type('html').write('<p>Set up your phone');
      lookup.later(() => {
        lateNext = true;
        next();
      });
      throw new Error('enrolment page down');
    }, ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      await expectAnswerCutOff(nobody, '/security');
      await lookup.now();
      expect(lateNext).toBe(true);
      expect(ran.handler).toBe(false);
      expect((await nobody.request('/ping')).body).toBe('pong');
    });
  });

  it('one that rejects and calls next() a moment later runs nothing: the user had the error page, the guarded handler never runs', async () => {
    const ran = { handler: false };
    let lateNext = false;
    const lookup = setOff();
    app = await appWith(async (_req, _res, next) => {
      lookup.later(() => {
        lateNext = true;
        next();
      });
      throw new Error('enrolment page down');
    }, ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(500);
      expect(answer.body).not.toContain('codes');
      await lookup.now();
      expect(lateNext).toBe(true);
      expect(ran.handler).toBe(false);
      expect(app!.errors).toEqual([]); // no handler writing over the error page ("headers already sent")
      expect((await nobody.request('/ping')).body).toBe('pong');
    });
  });

  it.each([
    ['rejects', 'reject'],
    ['fails the Express way, next(err),', 'next(err)'],
  ] as const)(
    'one that %s and answers a moment later (a callback set off before it failed) changes nothing: the user had the error page, the app goes on serving',
    async (_what, how) => {
      const ran = { handler: false };
      let lateAnswer = false;
      const lookup = setOff();
      app = await appWith(async (_req, res, next) => {
        // An enrolment lookup whose callback redirects, and an audit write that fails first.
        lookup.later(() => {
          lateAnswer = true;
          res.redirect('/enrol');
        });
        const failure = new Error('enrolment audit write failed');
        if (how === 'reject') throw failure;
        next(failure);
      }, ran);
      await asUserWithoutPhone(app!, async (nobody) => {
        const answer = await nobody.request('/security');
        expect(answer.status).toBe(500);
        expect(answer.body).toContain('</html>');
        await lookup.now();
        expect(lateAnswer).toBe(true);
        expect(ran.handler).toBe(false);
        expect((await nobody.request('/ping')).body).toBe('pong');
      });
    },
  );

  it('one that fails the Express way, next(err), gets the kit’s error page as one that throws: its error is logged described, without the secret, never handed to Express’s error handlers with its stack', async () => {
    const ran = { handler: false };
    app = await appWith((_req, _res, next) => {
      // An enrolment lookup's callback reporting its failure.
      setImmediate(() => next(new Error(`enrolment lookup failed (${app!.secret})`)));
    }, ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(500);
      expect(answer.body).toMatch(/^<!doctype html>/i); // the kit's page
      expect(answer.body).not.toContain('enrolment lookup failed');
      expect(answer.body).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(app!.errors).toEqual([]); // the app's error handler (and Express's after it) never saw it
      const lines = app!.logs.filter((line) => line.includes('enrolment lookup failed'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toContain(app!.secret);
      expect(lines[0]).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(ran.handler).toBe(false);
      expect(await unhandled.settled()).toEqual([]);
    });
  });

  it('one that answers (a redirect to enrolment) and then calls next(err): the redirect stands, the error is logged once and never reaches the app’s error handler', async () => {
    const ran = { handler: false };
    app = await appWith((_req, res, next) => {
      res.redirect('/enrol');
      next(new Error('enrolment audit write failed'));
    }, ran);
    await asUserWithoutPhone(app!, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(302);
      expect(answer.location).toBe('/enrol');
      expect(app!.errors).toEqual([]);
      expect(app!.logs.filter((line) => line.includes('enrolment audit write failed'))).toHaveLength(1);
      expect(ran.handler).toBe(false);
    });
  });
});

describe('an onUnenrolled that answers and calls next()', () => {
  it.each([
    ['at once', false],
    ['a moment later (a callback set off before it answered)', true],
  ])(
    'one that redirects to enrolment and then calls next() %s: the redirect stands, the guarded handler never runs',
    async (_when, later) => {
      const ran = { handler: false };
      const callback = setOff();
      app = await appWith((_req, res, next) => {
        res.redirect('/enrol');
        if (later) callback.later(next);
        else next();
      }, ran);
      await asUserWithoutPhone(app!, async (nobody) => {
        const answer = await nobody.request('/security');
        expect(answer.status).toBe(302);
        expect(answer.location).toBe('/enrol');
        if (later) await callback.now();
        await nextTurn();
        expect(ran.handler).toBe(false);
        expect(app!.errors).toEqual([]);
        expect(app!.logs.filter((line) => line.includes('called next() after it answered'))).toHaveLength(1);
        expect((await nobody.request('/ping')).body).toBe('pong');
      });
    },
  );
});

describe('an onUnenrolled that never answers, in an app with errors: "next"', () => {
  it('the app’s own error handler, answering a moment later, gets its page to the user: the request never hangs', async () => {
    const ran = { handler: false };
    app = await startTestApp({
      kit: { scopes: [...SCOPES], errors: 'next', hookTimeouts: { onUnenrolled: 200 } },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get(
          '/security',
          kit.requireRecentVerification({
            scope: 'security',
            maxAge: 600,
            onUnenrolled: (() => new Promise<void>(() => {})) as express.RequestHandler,
          }),
          (_req, res) => {
            ran.handler = true;
            res.send('codes');
          },
        );
        // An error page drawn after an await (a template rendered asynchronously, an error report).
        routes.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
          setTimeout(
            () =>
              res
                .status(503)
                .type('html')
                .send(`<p>app error page: ${String(error)}</p>`),
            20,
          );
        });
      },
    });
    await asUserWithoutPhone(app!, async (nobody) => {
      const answer = await nobody.request('/security', { timeoutMs: 4_000 });
      expect(answer.status).toBe(503);
      expect(answer.body).toContain('app error page');
      expect(ran.handler).toBe(false);
    });
  });
});
