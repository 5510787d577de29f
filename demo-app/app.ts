/**
 * The demo integrator: an Express app with a demo sign-in and two actions guarded by SMS
 * verification through the kit. Importable by tests (listen on port 0); run.ts wires it up for
 * `npm run demo`.
 *
 * Order matters: helmet (every response) -> express-session (the kit's CSRF token and resolveUser
 * read it) -> the demo's routes -> the kit's router at '/' (start route, start-again page, and the
 * landing at the returnUrl's path) -> 404 and error pages.
 */
import express from 'express';
import type { Database } from 'better-sqlite3';
import type { VerificationKit, VerifyStore } from 'hosted-sms-verify-kit';
import type { DemoAppOptions } from './app-options.ts';
import { openDemoData, type DemoData } from './data.ts';
import { createDemoKit } from './demo-kit.ts';
import { DEFAULT_OPERATORS, setOperators } from './operators.ts';
import { mountSecurityPages } from './routes/account-security.ts';
import { mountApi } from './routes/api.ts';
import { mountErrorPages, mountNotFound } from './routes/errors.ts';
import { mountOperatorPages } from './routes/operator.ts';
import { mountAccountPages, mountVerifiedPages } from './routes/pages.ts';
import { mountSecurityHeaders } from './routes/security.ts';
import { mountSessions, SESSION_MAX_AGE_MS } from './routes/sessions.ts';
import { signedInUser } from './routes/signed-in.ts';
import { mountAssets, mountSignIn } from './routes/signin.ts';
import './session-data.ts';

export type { DemoAppOptions } from './app-options.ts';
export { SESSION_COOKIE } from './routes/sessions.ts';

export interface DemoApp {
  app: express.Express;
  kit: VerificationKit<unknown>;
  /** 'sqlite' (DATABASE_PATH) or 'postgres' (DATABASE_URL). */
  storeKind: 'sqlite' | 'postgres';
  /** The kit's store (attempts), on the demo's database; tests read attempts through it. */
  store: VerifyStore<unknown>;
  /** The SQLite handle (SQLite only: throws on PostgreSQL). */
  db: Database;
  close(): Promise<void>;
}

export function createDemoApp(options: DemoAppOptions): DemoApp {
  const now = options.now ?? Date.now;
  const data = openDemoData({
    databasePath: options.databasePath,
    databaseUrl: options.databaseUrl,
    sessionTtlMs: SESSION_MAX_AGE_MS,
    now,
  });
  const queries = data.reads;
  const kit = createDemoKit(options, data, now, (req) => signedInUser(queries, req));

  const app = express();
  app.disable('x-powered-by');
  // Behind a TLS-terminating proxy set TRUST_PROXY (e.g. 1 or "loopback") so req.secure, and with
  // it the cookie's Secure flag, follow X-Forwarded-Proto. Off by default: nothing to trust on loopback.
  app.set('trust proxy', options.trustProxy);
  setOperators(app, options.operators ?? DEFAULT_OPERATORS);
  mountSecurityHeaders(app, new URL(options.returnUrl).protocol === 'https:');
  mountSessions(app, options.sessionSecret, data.sessionStore);
  mountAssets(app);
  mountSignIn(app, queries, kit.grants, options.logger);
  mountAccountPages(app, queries, kit, now);
  mountVerifiedPages(app, queries, kit);
  mountSecurityPages(app, data, kit, { secret: options.sessionSecret, now });
  mountOperatorPages(app, queries, kit, { pumpingOff: options.pumping?.mode === 'off' });
  mountApi(app, queries);
  // The kit: POST /verify/start, GET /verify/start-again, GET <returnUrl path> (the landing).
  app.use('/', kit.router);
  mountNotFound(app);
  mountErrorPages(app, options.logger);
  return demoAppHandle(app, kit, data);
}

function demoAppHandle(app: express.Express, kit: VerificationKit<unknown>, data: DemoData): DemoApp {
  let closed: Promise<void> | undefined;
  return {
    app,
    kit,
    storeKind: data.kind,
    store: data.store,
    get db(): Database {
      if (data.db === undefined) {
        throw new Error('The demo runs on PostgreSQL (DATABASE_URL): there is no SQLite handle.');
      }
      return data.db;
    },
    close() {
      closed ??= (async () => {
        await kit.close();
        await data.close();
      })();
      return closed;
    },
  };
}
