/**
 * The hand-written landing on plain node-postgres, what an integrator would write from the spec:
 * look the attempt up by state, GET /session, check verified + state + userRef, then on one pooled
 * client BEGIN, the conditional mark, the action's INSERT when the mark took, COMMIT; 303. Its
 * table has the index its sweep of pending attempts needs (BASELINE_PENDING_INDEX).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import pg from 'pg';
import { Pool } from 'undici';
import {
  ACTION,
  basicAuthorization,
  BASELINE_PENDING_INDEX,
  PG_BASELINE_ATTEMPTS_TABLE,
  PG_BASELINE_SEED_ATTEMPTS,
  PG_GRANTS_TABLE,
  PG_INSERT_GRANT,
  seedPostgres,
  SUCCESS_PATH,
  type ConfigureArgs,
  type SeedAttempt,
} from '../../common.ts';
import { bag, baseApp, pgCounts, readStatus, type ConfiguredApp } from './shared.ts';

export function configureBaselinePostgres(args: ConfigureArgs): ConfiguredApp {
  const pool = new pg.Pool({ connectionString: args.databaseUrl, max: 10 });
  const ready = pool.query(`${PG_BASELINE_ATTEMPTS_TABLE}; ${BASELINE_PENDING_INDEX}; ${PG_GRANTS_TABLE};`);
  const seed = async (attempts: SeedAttempt[]) => {
    await ready;
    await seedPostgres(pool, PG_BASELINE_SEED_ATTEMPTS, attempts, [ACTION, SUCCESS_PATH, Date.now()]);
  };
  const undiciPool = new Pool(new URL(args.emulatorUrl).origin, { keepAliveTimeout: 10_000 });
  const authorization = basicAuthorization(args.clientId, args.secret);

  const app = baseApp();
  app.post('/bench/login', express.urlencoded({ extended: false }), (req, res) => {
    bag(req).user = String((req.body as { user?: string }).user);
    res.json({ csrf: 'unused' });
  });
  app.get('/verify/return', async (req: Request, res: Response, next: NextFunction) => {
    try {
      await land(req, res, pool, undiciPool, authorization);
    } catch (error) {
      next(error);
    }
  });
  return { app, pgPool: pool, upstream: undiciPool, seed, counts: pgCounts(pool, 'attempts') };
}

async function land(req: Request, res: Response, pool: pg.Pool, upstream: Pool, authorization: string): Promise<void> {
  const { session_id: sessionId, state } = req.query;
  if (typeof sessionId !== 'string' || typeof state !== 'string') {
    res.status(400).send('bad link');
    return;
  }
  const { rows } = await pool.query<{ session_id: string; user_ref: string; return_to: string; outcome: string }>({
    name: 'by_state',
    text: 'SELECT session_id, user_ref, return_to, outcome FROM attempts WHERE state = $1',
    values: [state],
  });
  const row = rows[0];
  if (row === undefined || row.session_id !== sessionId) {
    res.status(400).send('unknown');
    return;
  }
  if (row.outcome === 'pending') {
    const read = await readStatus(upstream, authorization, { sessionId, state, userRef: row.user_ref });
    if (read === 'service_error') {
      res.status(502).send('service');
      return;
    }
    if (read === 'not_verified') {
      res.status(200).type('html').send('<!doctype html><title>Pending</title><p>Not verified (yet).</p>');
      return;
    }
    await fulfil(pool, sessionId, row.user_ref);
  }
  if (bag(req).user !== row.user_ref) {
    res.type('html').send('<!doctype html><title>Done</title><p>Done.</p>');
    return;
  }
  res.set('Cache-Control', 'no-store');
  res.redirect(303, row.return_to);
}

/** On one pooled client: BEGIN, the conditional mark, the grant when the mark took, COMMIT. */
async function fulfil(pool: pg.Pool, sessionId: string, userRef: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const marked = await client.query({
      name: 'mark',
      text: `UPDATE attempts SET outcome = 'fulfilled', fulfilled_at = $1
        WHERE session_id = $2 AND outcome = 'pending'`,
      values: [Date.now(), sessionId],
    });
    if (marked.rowCount === 1) {
      await client.query({ name: 'grant', text: PG_INSERT_GRANT, values: [sessionId, userRef] });
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
