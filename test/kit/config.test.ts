/**
 * The factory validates its options when called, with messages that name the fix and never the
 * secret; the router detects being mounted anywhere but '/'.
 */
import Database from 'better-sqlite3';
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createStartLimits,
  createVerificationKit,
  isKitError,
  KitErrorCode,
  type VerificationKitOptions,
  type VerifyClient,
} from '../../middleware/index.ts';
import type { CreateSessionInput } from '../../middleware/types.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { contextOf } from '../../middleware/create-kit.ts';

const store = createSqliteStore({ database: ':memory:' });
afterAll(async () => {
  await store.close();
});

const SECRET = 'top-secret-value-9f8e7d';

function options(overrides: Partial<VerificationKitOptions> = {}): VerificationKitOptions {
  return {
    baseUrl: 'http://127.0.0.1:9',
    clientId: 'client-1',
    clientSecret: SECRET,
    returnUrl: 'http://localhost:3000/verify/return',
    store,
    actions: [{ name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {} }],
    resolveUser: () => null,
    ...overrides,
  };
}

function configError(overrides: Partial<VerificationKitOptions>): string {
  try {
    createVerificationKit(options(overrides));
  } catch (error) {
    expect(isKitError(error, KitErrorCode.InvalidOptions)).toBe(true);
    const message = (error as Error).message;
    expect(message).not.toContain(SECRET);
    return message;
  }
  throw new Error('expected createVerificationKit to throw');
}

describe('option validation', () => {
  it('accepts a valid configuration and keeps returnUrl byte for byte', async () => {
    // Canonical, yet easy to rewrite: a port, a percent-encoded path and a trailing slash.
    const returnUrl = 'https://app.example.com:8443/verify/r%C3%A9turn/';
    const sent: CreateSessionInput[] = [];
    const client: VerifyClient = {
      createSession: async (input) => {
        sent.push(input);
        return {
          sessionId: 'ses_1',
          verifyUrl: 'https://verify.example/v',
          handoff: 'hx_1',
          expiresInSeconds: 120,
          replayed: false,
        };
      },
      getSession: async () => ({ status: 'pending' }),
      close: async () => {},
    };
    const user = { userRef: 'user-1', destination: '+15550100001' };
    const kit = createVerificationKit(options({ returnUrl, client, resolveUser: () => user }));
    expect(kit.router).toBeTypeOf('function');
    const app = express();
    app.use(session({ secret: 'config-test-session-secret', resave: false, saveUninitialized: false }));
    app.get('/csrf', (req, res) => void res.json({ csrf: kit.csrfToken(req) }));
    app.use(kit.router);
    const browser = request.agent(app);
    const { csrf } = (await browser.get('/csrf')).body as { csrf: string };
    const started = await browser.post('/verify/start').type('form').send({ _csrf: csrf, action: 'grant_badge' });
    expect(started.status).toBe(200);
    // What the service is sent is the returnUrl exactly as given.
    expect(sent.map((input) => input.returnUrl)).toEqual([returnUrl]);
    await kit.close();
  });

  it('returnUrl with a query: names the fix', () => {
    expect(configError({ returnUrl: 'http://localhost:3000/verify/return?x=1' })).toContain(
      'must be absolute with no query or fragment (the service appends session_id and state): got "http://localhost:3000/verify/return?x=1". Did you mean "http://localhost:3000/verify/return"?',
    );
  });

  it('returnUrl relative, with a fragment, with whitespace, non-canonical, or plain http off localhost', () => {
    expect(configError({ returnUrl: '/verify/return' })).toContain('must be absolute');
    expect(configError({ returnUrl: 'http://localhost:3000/verify/return#top' })).toContain(
      'Did you mean "http://localhost:3000/verify/return"?',
    );
    expect(configError({ returnUrl: 'http://localhost:3000/verify/return\n' })).toContain('no whitespace');
    expect(configError({ returnUrl: 'http://LOCALHOST:3000/verify/return' })).toContain(
      'which browsers read as "http://localhost:3000/verify/return"',
    );
    expect(configError({ returnUrl: 'http://app.example.com/verify/return' })).toContain(
      'Did you mean "https://app.example.com/verify/return"?',
    );
  });

  it('platform and returnUrl scheme must agree', () => {
    expect(configError({ platform: 'mobile' })).toContain("for platform 'mobile' must be a custom-scheme deep link");
    expect(configError({ returnUrl: 'com.example.app://verify/return' })).toContain("set platform: 'mobile'");
    expect(() =>
      createVerificationKit(options({ platform: 'mobile', returnUrl: 'com.example.app://verify/return' })),
    ).not.toThrow();
  });

  it('actions: unsafe successPath, duplicate names, bad sensitivity, async-looking shape', () => {
    const fulfil = () => {};
    expect(
      configError({
        actions: [{ name: 'a', operationSensitivity: 'normal', successPath: 'https://evil.example/', fulfil }],
      }),
    ).toContain('successPath` must be a same-origin path');
    expect(
      configError({ actions: [{ name: 'a', operationSensitivity: 'normal', successPath: '//evil.example', fulfil }] }),
    ).toContain('successPath');
    expect(
      configError({
        actions: [
          { name: 'a', operationSensitivity: 'normal', successPath: '/x', fulfil },
          { name: 'a', operationSensitivity: 'normal', successPath: '/y', fulfil },
        ],
      }),
    ).toContain('registered twice');
    expect(
      configError({ actions: [{ name: 'a', operationSensitivity: 'urgent' as 'normal', successPath: '/x', fulfil }] }),
    ).toContain("must be 'normal' or 'sensitive'");
    expect(configError({ actions: [] })).toContain('non-empty array');
  });

  it("actions: an invalid name does not hide the action's other problems, nor the next action's", () => {
    const message = configError({
      actions: [
        { name: 'Bad Name', operationSensitivity: 'urgent' as 'normal', successPath: 'https://evil.example/' } as never,
        { name: 'ok', operationSensitivity: 'normal', successPath: '//evil.example', fulfil: 'nope' as never },
      ],
    });
    expect(message).toContain('`actions[0].name` must match');
    expect(message).toContain("`actions[0].operationSensitivity` must be 'normal' or 'sensitive'");
    expect(message).toContain('`actions[0].successPath` must be a same-origin path');
    expect(message).toContain('`actions[0].fulfil` must be a function');
    expect(message).toContain('`actions[1] ("ok").successPath` must be a same-origin path');
    expect(message).toContain('`actions[1] ("ok").fulfil` must be a function');
  });

  it('actions: an async fulfil on the synchronous SQLite store is refused at creation, with the fix', () => {
    const message = configError({
      actions: [{ name: 'a', operationSensitivity: 'normal', successPath: '/x', fulfil: async () => {} }],
    });
    expect(message).toContain(
      '`actions[0] ("a").fulfil` is an async function, but this store\'s transaction is synchronous (SQLite)',
    );
    expect(message).toContain('Make fulfil synchronous');
    // A store whose transaction spans a promise (PostgreSQL) takes it: only the store decides.
    const { synchronousTransactions: _sync, ...asyncCapable } = store;
    const kit = createVerificationKit(
      options({
        store: asyncCapable,
        actions: [{ name: 'a', operationSensitivity: 'normal', successPath: '/x', fulfil: async () => {} }],
      }),
    );
    expect(kit.router).toBeTypeOf('function');
  });

  it('actions: successPath may be a function of the landed attempt (its result is checked at the landing)', async () => {
    const kit = createVerificationKit(
      options({
        actions: [
          {
            name: 'a',
            operationSensitivity: 'normal',
            successPath: ({ sessionId }) => `/done/${sessionId}`,
            fulfil: () => {},
          },
        ],
      }),
    );
    expect(kit.router).toBeTypeOf('function');
    await kit.close();
  });

  it("actions: ordering must be 'latest' or 'independent'; onOutcome must be a function", () => {
    const fulfil = () => {};
    const ordering = 'oldest' as 'latest';
    const actions = [{ name: 'a', operationSensitivity: 'normal' as const, successPath: '/x', ordering, fulfil }];
    expect(configError({ actions })).toContain("ordering` must be 'latest'");
    expect(configError({ onOutcome: 'https://hooks.example/' as never })).toContain('`onOutcome` must be a function');
  });

  it('actions: a misspelt key (requireRecentVerifcation) is refused with the name it meant, not dropped with its step-up', () => {
    const fulfil = () => {};
    const typo = { scope: 'account', maxAge: 600 };
    const actions = [
      {
        name: 'change_phone',
        operationSensitivity: 'sensitive' as const,
        successPath: '/x',
        fulfil,
        requireRecentVerifcation: typo,
      },
    ];
    expect(configError({ actions } as never)).toContain(
      '`actions[0] ("change_phone").requireRecentVerifcation` is not an option: did you mean `requireRecentVerification`?',
    );
    // A key is the app's own text: one with a line break is quoted, never written into the message as it is.
    const odd = [{ ...actions[0], ['x\nforged: line']: true }];
    const said = configError({ actions: odd } as never);
    expect(said).toContain('."x\\nforged: line"` is not an option');
    expect(said).not.toContain('x\nforged');
  });

  it('reports every problem at once and never quotes the secret or URL credentials', () => {
    const message = configError({
      baseUrl: `https://client-1:${SECRET}@verify.example.com/?q=1`,
      clientSecret: `${SECRET}\n`,
      returnUrl: 'nope',
      resolveUser: undefined as never,
    });
    // The URL's password is the secret as given less its newline: it is said to carry the secret.
    expect(message).toContain('`baseUrl` must not carry the client secret');
    expect(message).toContain('`clientSecret` contains whitespace');
    expect(message).toContain('`returnUrl` must be absolute');
    expect(message).toContain('`resolveUser` must be a function');
    expect(message).not.toContain(SECRET);
  });

  it('a missing secret says where it should come from', () => {
    expect(configError({ clientSecret: '' })).toContain('process.env.VERIFY_CLIENT_SECRET');
  });

  it('route paths must not collide with the landing', () => {
    expect(configError({ routes: { start: '/verify/return' } })).toContain('give each route its own path');
  });
});

describe('grouped options', () => {
  it('routes: a path moves a route, false leaves it out, and a bad path or unknown route names the fix', async () => {
    const kit = createVerificationKit(options({ routes: { start: '/go', startAgain: '/go-again' } }));
    const app = express();
    app.use(kit.router);
    expect((await request(app).get('/go')).status).toBe(405);
    expect((await request(app).get('/verify/start')).status).toBe(404);
    expect((await request(app).get('/go-again?action=grant_badge')).status).toBe(200);
    await kit.close();

    const landingOnly = createVerificationKit(options({ routes: { start: false } }));
    const bare = express();
    bare.use(landingOnly.router);
    expect((await request(bare).post('/verify/start')).status).toBe(404);
    expect((await request(bare).get('/verify/start-again?action=grant_badge')).status).toBe(404);
    expect((await request(bare).get('/verify/return?state=x')).status).toBe(400);
    await landingOnly.close();

    expect(configError({ routes: { start: 'verify/start' } })).toContain(
      '`routes.start` must be a plain absolute path',
    );
    expect(configError({ routes: { begin: '/x' } as never })).toContain('`routes.begin` is not an option');
    expect(configError({ routes: { startAgain: false } })).toContain('`routes.startAgain` cannot be false');
  });

  it('client: timeouts and retries the built client cannot keep are reported with every other problem, at once', () => {
    const message = configError({
      clientId: '',
      client: { timeouts: { connectMs: 0 }, retry: { baseDelayMs: Number.NaN, maxAttempts: 0 } },
    });
    expect(message).toContain('`clientId`');
    expect(message).toContain('`client.timeouts.connectMs` must be whole milliseconds from 1 to 2147483647');
    expect(message).toContain('`client.retry.baseDelayMs` must be whole milliseconds from 0 to 2147483647');
    expect(message).toContain('`client.retry.maxAttempts` must be a whole number of tries from 1 to 1000');
  });

  it('client: settings for the built client are checked; a ready client is used as given', async () => {
    expect(configError({ client: { timeouts: 5 } as never })).toContain('`client.timeouts` must be an object');
    expect(configError({ client: { retries: {} } as never })).toContain('`client.retries` is not an option');
    // A typo inside a group did nothing: the default was used as if the setting were not there.
    expect(configError({ client: { timeouts: { statsRead: 2000 } } as never })).toContain(
      '`client.timeouts.statsRead` is not an option; use connectMs, headersMs, bodyMs.',
    );
    expect(configError({ client: { retry: { maxAttempt: 1 } } as never })).toContain(
      '`client.retry.maxAttempt` is not an option: did you mean `maxAttempts`?',
    );
    expect(configError({ client: { connections: 0 } })).toContain('`client.connections` must be a whole number');
    const built = createVerificationKit(
      options({ client: { timeouts: { headersMs: 100 }, retry: { maxAttempts: 1 } } }),
    );
    expect(contextOf(built).client.getSession).toBeTypeOf('function');
    await built.close();
    let closed = false;
    const asked: string[] = [];
    const given = {
      createSession: async () => never(),
      getSession: async (sessionId: string) => {
        asked.push(sessionId);
        return { status: 'failed' as const, reason: 'otp_locked' };
      },
      close: async () => void (closed = true),
    };
    const kit = createVerificationKit(options({ client: given }));
    // Used as given, behind the kit's coalescing of status reads.
    expect(await contextOf(kit).client.getSession('ses_1')).toEqual({ status: 'failed', reason: 'otp_locked' });
    expect(asked).toEqual(['ses_1']);
    await kit.close();
    expect(closed).toBe(false); // a client the kit did not build is the caller's to close
  });

  it('sweep.firstCheckAfterMs and landing timings are checked with the group named', () => {
    expect(configError({ sweep: { firstCheckAfterMs: -1 } })).toContain(
      '`sweep.firstCheckAfterMs` must be a non-negative',
    );
    expect(configError({ landing: { refreshSeconds: 0 } })).toContain('`landing.refreshSeconds` must be a positive');
    expect(configError({ sweep: { maxReadsPerSecond: 0 } })).toContain('`sweep.maxReadsPerSecond` must be a positive');
  });

  it("landing.pendingReuseMs at or above the re-check interval is refused with the fix: every re-check would reuse the cached 'pending'", () => {
    const message = configError({ landing: { pendingRecheckIntervalMs: 300, pendingReuseMs: 1000 } });
    expect(message).toContain(
      '`landing.pendingReuseMs` (1000 ms) must be below `landing.pendingRecheckIntervalMs` (300 ms)',
    );
    expect(message).toContain('landing: { pendingReuseMs: 240 }');
    // The default reuse (500 ms) under a shorter interval given alone: the same problem, named.
    expect(configError({ landing: { pendingRecheckIntervalMs: 400 } })).toContain('`landing.pendingReuseMs` (500 ms)');
    // Below the interval, no re-checks at all, or no reuse: accepted.
    expect(() =>
      createVerificationKit(options({ landing: { pendingRecheckIntervalMs: 300, pendingReuseMs: 250 } })),
    ).not.toThrow();
    expect(() =>
      createVerificationKit(options({ landing: { pendingRechecks: 0, pendingReuseMs: 5000 } })),
    ).not.toThrow();
    expect(() =>
      createVerificationKit(options({ landing: { pendingRecheckIntervalMs: 100, pendingReuseMs: 0 } })),
    ).not.toThrow();
  });

  it("sweep.maxReadsPerSecond is accepted and resolved as the kit sweeps' default cap", async () => {
    const kit = createVerificationKit(options({ sweep: { maxReadsPerSecond: 25 } }));
    expect(contextOf(kit).sweep).toMatchObject({ maxReadsPerSecond: 25 });
    expect(contextOf(createVerificationKit(options())).sweep.maxReadsPerSecond).toBeUndefined();
    await kit.close();
  });

  it('`limits.database` is refused with the store that replaces it, and the database stays untouched', () => {
    // The kit no longer opens a SQLite counter store itself (that would load better-sqlite3 in a
    // PostgreSQL-only app): the fix names the `./sqlite` entry.
    const { consumeStartBudgets: _counts, ...noCounter } = store;
    const counters = new Database(':memory:');
    const limited = { store: noCounter, limits: { database: counters } as object };
    expect(configError(limited)).toContain(
      "pass `store: createSqliteStore({ database })` from 'hosted-sms-verify-kit/sqlite'",
    );
    expect(counters.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([]);
    counters.close();
  });
});

describe('the kit builds what its options ask for', () => {
  it('the start limits only for a kit with a start route', () => {
    const limitsOf = (routes: { start?: false }) =>
      contextOf(createVerificationKit(options({ store: createSqliteStore({ database: ':memory:' }), routes })))
        .startLimits;
    expect(limitsOf({})?.consume).toBeTypeOf('function');
    expect(limitsOf({ start: false })).toBeUndefined();
    // Without a start route, a store that counts no budgets needs no limits of its own.
    const { consumeStartBudgets: _none, ...uncounted } = createSqliteStore({ database: ':memory:' });
    expect(() => createVerificationKit(options({ store: uncounted }))).toThrow(/Start limits need a counter store/);
    expect(() => createVerificationKit(options({ store: uncounted, routes: { start: false } }))).not.toThrow();
  });

  it("kit.pumping keys an IPv6 address by the start limits' ipv6Subnet, also in a kit without a start route (the sweep job's, the fraud command's)", async () => {
    const slash48 = { key: '2001:db8:1:0:0:0:0:0/48' };
    for (const routes of [{}, { start: false as const }]) {
      const counted = createSqliteStore({ database: ':memory:' });
      const given = createStartLimits({ store: counted, destinationKey: 'k'.repeat(32), ipv6Subnet: 48 });
      for (const limits of [{ ipv6Subnet: 48 }, given]) {
        const kit = createVerificationKit(options({ store: counted, routes, limits }));
        expect(await kit.pumping.block({ address: '2001:db8:1:2::9' })).toMatchObject(slash48);
      }
    }
    expect(() => createVerificationKit(options({ routes: { start: false }, limits: { ipv6Subnet: 7 } }))).toThrow(
      /ipv6Subnet/,
    );
  });

  it('kit.runSweep and kit.startSweepWorker check their options like the factory', () => {
    const kit = createVerificationKit(options());
    expect(() => kit.startSweepWorker({ intervalMs: 0, concurrency: 0 })).toThrow(
      /^startSweepWorker: \n {2}- `intervalMs`.*\n {2}- `concurrency`/s,
    );
    return expect(kit.runSweep({ batchSize: 0 })).rejects.toThrow(/^runSweep: `batchSize` must be an integer/);
  });
});

function never(): never {
  throw new Error('not called');
}

describe('mount detection', () => {
  it('app.use("/prefix", kit.router) throws at startup, saying to mount at "/" because of the returnUrl path', () => {
    const kit = createVerificationKit(options());
    const app = express();
    let thrown: unknown;
    try {
      app.use('/auth', kit.router);
    } catch (error) {
      thrown = error;
    }
    expect(isKitError(thrown, KitErrorCode.MountedAtWrongPath)).toBe(true);
    expect((thrown as Error).message).toBe(
      'The verification kit\'s router is mounted at "/auth": mount it at \'/\' with app.use(kit.router) since the landing must answer at the returnUrl\'s path "/verify/return".',
    );
  });

  it('a router reached below a prefix (nested sub-app) is reported on the first request', async () => {
    const lines: string[] = [];
    const log = (obj: Record<string, unknown>, msg: string) => lines.push(`${String(obj.code)} ${msg}`);
    const kit = createVerificationKit(options({ logger: { info: log, warn: log, error: log } }));
    const inner = express();
    inner.use(kit.router);
    const outer = express();
    outer.use('/nested', inner);
    const response = await request(outer).get('/nested/verify/return?session_id=a&state=b');
    expect(response.status).toBe(500);
    expect(
      lines.some((line) => line.startsWith('mounted_at_wrong_path') && line.includes('mounted at "/nested"')),
    ).toBe(true);
  });

  it("the landing reads its query itself: the host app's `query parser` setting changes nothing", async () => {
    const lines: string[] = [];
    const log = (_obj: Record<string, unknown>, msg: string) => lines.push(msg);
    const kit = createVerificationKit(options({ logger: { info: log, warn: log, error: log } }));
    const app = express();
    app.set('query parser', false);
    app.use(kit.router);
    expect((await request(app).get('/verify/return?session_id=a&state=b')).status).toBe(400);
    // Both identifiers were read (the state's shape is what is wrong), not an empty query.
    expect(lines).toEqual(['This verification link is malformed (state); start again.']);
    await kit.close();
  });

  it("the integrator's hooks see the host app as req.app (its locals and settings), on Express 4 and 5", async () => {
    const seen: unknown[] = [];
    const kit = createVerificationKit(
      options({
        resolveUser: (req) => {
          seen.push({ host: req.app === app, db: req.app.locals.db, env: req.app.get('env') });
          return null;
        },
      }),
    );
    const app = express();
    app.locals.db = 'the host app database';
    app.set('env', 'staging');
    app.use(kit.router);
    expect((await request(app).get('/verify/start-again?action=grant_badge')).status).toBe(200);
    expect(seen).toEqual([{ host: true, db: 'the host app database', env: 'staging' }]);
    await kit.close();
  });

  it("kit.router in the app's own express.Router(): the app's routes after it keep the app's request and response", async () => {
    const kit = createVerificationKit(options());
    const app = express();
    app.locals.db = 'the host app database';
    // What the app's own middleware gives every request (a helper on its request prototype).
    (app.request as { tenant?: string }).tenant = 'acme';
    const routes = express.Router();
    routes.use(kit.router);
    routes.get('/account', (req, res) => {
      res.json({ host: req.app === app, db: req.app.locals.db, tenant: (req as { tenant?: string }).tenant });
    });
    app.use(routes);
    expect((await request(app).get('/account')).body).toEqual({
      host: true,
      db: 'the host app database',
      tenant: 'acme',
    });
    // The kit's own routes still answer there.
    expect((await request(app).get('/verify/start-again?action=grant_badge')).status).toBe(200);
    await kit.close();
  });

  it('kit.router used unmounted, as the server itself, still answers with the full Express request', async () => {
    const kit = createVerificationKit(options());
    const response = await request(kit.router).get('/verify/start-again?action=grant_badge');
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    await kit.close();
  });

  it('mounted at "/", the landing answers only at the exact returnUrl path (case and trailing slash count)', async () => {
    const kit = createVerificationKit(options());
    const app = express();
    app.use(kit.router);
    expect((await request(app).get('/verify/return?session_id=a&state=b')).status).toBe(400);
    expect((await request(app).get('/verify/return/?session_id=a&state=b')).status).toBe(404);
    expect((await request(app).get('/Verify/Return?session_id=a&state=b')).status).toBe(404);
  });

  it('a returnUrl path holding characters of Express route syntax is matched literally, on Express 4 and 5', async () => {
    const path = "/verify/(re)turn*+!:x[1]'";
    const kit = createVerificationKit(options({ returnUrl: `http://localhost:3000${path}` }));
    const app = express();
    app.use(kit.router);
    expect((await request(app).get(`${path}?session_id=a&state=b`)).status).toBe(400);
    for (const other of [
      '/verify/return',
      '/verify/returnx+!:x[1]',
      '/verify/returnanything',
      '/verify/(re)turn*+!:y',
    ]) {
      expect([other, (await request(app).get(`${other}?session_id=a&state=b`)).status]).toEqual([other, 404]);
    }
  });

  it("errors: 'next' hands KitErrors to Express's error handler with their stable code and status", async () => {
    const kit = createVerificationKit(options({ errors: 'next' }));
    const app = express();
    app.use(kit.router);
    app.use(
      (
        error: { code?: string; status?: number },
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        res.status(299).json({ code: error.code, status: error.status });
      },
    );
    const response = await request(app).get('/verify/return?state=x');
    expect(response.status).toBe(299);
    expect(response.body).toEqual({ code: 'invalid_return_params', status: 400 });
  });
});
