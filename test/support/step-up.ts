/**
 * The integrator's own routes behind the step-up guard, as the step-up suites mount them
 * (test/support/app.ts `ownRoutes`), and what the guarded handlers ran.
 */
import express from 'express';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Agent } from './agent.ts';
import { startTestApp, type TestApp } from './app.ts';
import type { StoreOptions } from './app-stores.ts';
import { USERS } from './users.ts';
import type { StepUpStore, VerifyStore } from '../../middleware/store/types.ts';

export const TEN_MINUTES = 600;

/** What the integrator's guarded handlers did, in order. */
export interface Ran {
  route: string;
  user: string;
  fields: Record<string, unknown>;
}

export function guardedRoutes(ran: Ran[]) {
  return (app: express.Express, kit: TestApp['kit']) => {
    const userOf = (req: express.Request) => String((req.session as { user?: string }).user);
    app.get('/security', kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }), (req, res) => {
      ran.push({ route: 'security', user: userOf(req), fields: {} });
      res.type('html').send(`<!doctype html><title>Security</title><h1 id="security">codes for ${userOf(req)}</h1>`);
    });
    // A file upload behind the guard: the handler reads the multipart body itself (as multer would).
    app.post('/documents', kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }), (req, res) => {
      let size = 0;
      req.on('data', (chunk: Buffer) => (size += chunk.length));
      req.on('end', () => {
        ran.push({ route: 'documents', user: userOf(req), fields: { size } });
        res.json({ uploaded: size });
      });
    });
    // A route whose app reads every body as text before the guard (as a signature check needs it whole).
    app.post(
      '/notes',
      express.text({ type: '*/*' }),
      kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }),
      (req, res) => {
        ran.push({ route: 'notes', user: userOf(req), fields: { body: req.body as unknown } });
        res.type('html').send(`<!doctype html><title>Saved</title><h1 id="saved">note saved</h1>`);
      },
    );
    app.get('/export', kit.requireRecentVerification({ scope: 'export', maxAge: TEN_MINUTES }), (_req, res) => {
      res.json({ exported: true });
    });
    app.post(
      '/accounts/:account/payee',
      express.urlencoded({ extended: false }),
      kit.requireRecentVerification({ scope: 'payout', maxAge: 300, bindTo: (req) => String(req.params.account) }),
      (req, res) => {
        ran.push({ route: 'payee', user: userOf(req), fields: { ...(req.body as Record<string, unknown>) } });
        res.type('html').send(`<!doctype html><title>Saved</title><h1 id="saved">payee saved</h1>`);
      },
    );
  };
}

/** A method override as method-override's README sets it up: the form's `_method`, taken out of the body. */
export function methodOverride(req: express.Request, _res: express.Response, next: express.NextFunction): void {
  const body = req.body as { _method?: unknown } | undefined;
  if (req.method === 'POST' && typeof body?._method === 'string') {
    (req as express.Request & { originalMethod?: string }).originalMethod = req.method;
    req.method = body._method.toUpperCase();
    delete body._method;
  }
  next();
}

export const SCOPES = [
  {
    name: 'security',
    operationSensitivity: 'sensitive',
    label: { en: 'see your recovery codes', fr: 'voir vos codes' },
  },
  { name: 'export', operationSensitivity: 'normal', successPath: '/done' },
  { name: 'payout', operationSensitivity: 'sensitive', label: 'change the payout account' },
] as const;

/** The confirm page's start form fields. */
export function confirmForm(html: string): { action: string; intent: string; csrf: string } {
  const action = /name="action" value="([^"]+)"/.exec(html)?.[1];
  const intent = /name="intent" value="([^"]+)"/.exec(html)?.[1];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (action === undefined || intent === undefined || csrf === undefined) throw new Error(`no start form in ${html}`);
  return { action, intent, csrf };
}

/**
 * The step-up suites' app on the suite's store (the SCOPES and guardedRoutes above), from beforeAll
 * to afterAll; `routes` mounts a suite's own routes after those. `ran` is what its guarded
 * handlers did.
 */
export function useStepUpApp(
  storeOptions: StoreOptions,
  routes?: (app: express.Express, kit: TestApp['kit']) => void,
): { readonly app: TestApp; ran: Ran[] } {
  let app: TestApp | undefined;
  const ran: Ran[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (own, kit) => {
        guardedRoutes(ran)(own, kit);
        routes?.(own, kit);
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });
  return {
    ran,
    get app() {
      if (app === undefined) throw new Error('The step-up app runs from beforeAll to afterAll: read it in a test.');
      return app;
    },
  };
}

/** Runs `run` signed in as a user without a phone number (known only while it runs). */
export async function asUserWithoutPhone(on: TestApp, run: (nobody: Agent) => Promise<void>): Promise<void> {
  USERS.nophone = { userRef: 'user-nophone', destination: '' };
  try {
    await run(await on.agent().signIn('nophone'));
  } finally {
    delete USERS.nophone;
  }
}

/**
 * The real store, its step-up methods replaced by `changed` (given the real step-up store): a
 * custom store of the app's own that answers some calls its own way.
 */
export function withStepUp(
  store: VerifyStore<unknown>,
  changed: (real: StepUpStore) => Partial<StepUpStore>,
): VerifyStore<unknown> {
  const real = store.stepUp!;
  const stepUp: StepUpStore = {
    insertGrant: (grant) => real.insertGrant(grant),
    listGrants: (query) => real.listGrants(query),
    revokeGrants: (query) => real.revokeGrants(query),
    insertIntent: (intent, maxLive) => real.insertIntent(intent, maxLive),
    renewPageIntent: (query) => real.renewPageIntent(query),
    findIntent: (id) => real.findIntent(id),
    consumeIntent: (id, now) => real.consumeIntent(id, now),
    purgeExpiredIntents: (query) => real.purgeExpiredIntents(query),
    ...changed(real),
  };
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'stepUp') return stepUp;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Requests `path` as `agent` and expects its answer begun and then cut off by the kit within 4 s:
 * neither answered whole nor left open until the client gave up.
 */
export async function expectAnswerCutOff(agent: Agent, path: string): Promise<void> {
  const began = Date.now();
  const cutOff = await agent.request(path, { timeoutMs: 4_000 }).then(
    () => 'answered whole',
    (error: Error) => error.message,
  );
  expect(cutOff).not.toContain('did not answer within');
  expect(cutOff).not.toBe('answered whole');
  expect(Date.now() - began).toBeLessThan(4_000);
}
