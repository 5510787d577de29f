/** What both apps of the app child share: the express stack, the session's user, and what `configure` returns. */
import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import express, { type Request } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import type pg from 'pg';
import type { Pool } from 'undici';
import type { VerificationKit, VerifyStore } from '../../../middleware/index.ts';
import type { SeedAttempt } from '../../common.ts';

export type Counts = { grants: number; fulfilled: number };

/** A configured app, with what the orchestrator calls on it and what the child closes when it exits. */
export interface ConfiguredApp {
  app: express.Express;
  seed: (attempts: SeedAttempt[]) => void | Promise<void>;
  counts: () => Counts | Promise<Counts>;
  kit?: VerificationKit<unknown>;
  upstream?: Pool;
  store?: VerifyStore<unknown>;
  pgPool?: pg.Pool;
  db?: Database;
}

type SessionData = { user?: string; csrf?: string };
export const bag = (req: Request) => req.session as unknown as SessionData;

export function baseApp(): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(
    session({
      name: 'bench_sid',
      secret: randomBytes(16).toString('hex'),
      resave: false,
      saveUninitialized: false,
      cookie: { httpOnly: true, sameSite: 'lax' },
    }),
  );
  return app;
}

export const pgCounts = (pool: pg.Pool, attemptsTable: string) => async (): Promise<Counts> => {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*) FROM bench_grants)::int AS grants,
            (SELECT count(*) FROM ${attemptsTable} WHERE outcome = 'fulfilled')::int AS fulfilled`,
  );
  return rows[0] as Counts;
};

/** What the session-status read of a landing found: verified for this attempt, or not (yet). */
export type StatusRead = 'verified' | 'not_verified' | 'service_error';

/** The hand-written landings' status read: GET /session, then verified + the echoed state and userRef. */
export async function readStatus(
  upstream: Pool,
  authorization: string,
  attempt: { sessionId: string; state: string; userRef: string },
): Promise<StatusRead> {
  const answer = await upstream.request({
    method: 'GET',
    path: `/session/${encodeURIComponent(attempt.sessionId)}`,
    headers: { authorization, accept: 'application/json' },
  });
  const status = (await answer.body.json()) as { status?: string; state?: string; userRef?: string };
  if (answer.statusCode !== 200) return 'service_error';
  const verified = status.status === 'verified' && status.state === attempt.state && status.userRef === attempt.userRef;
  return verified ? 'verified' : 'not_verified';
}
