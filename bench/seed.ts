/**
 * Seeds sessions through the emulator's real API: POST /session (Basic auth, a real create with its
 * SMS), then POST /_control/sessions/:id/complete {outcome: 'verified'}, as if the user had entered
 * the code on the hosted page. Returns what the integrator's store needs for each attempt.
 */
import { createSqliteStore } from '../middleware/store/sqlite/sqlite.ts';
import { basicAuthorization, destinationOf, dueAttempt, newState, type SeedAttempt } from './common.ts';
import { closedLoop, loadPool } from './load.ts';

export interface SeedClient {
  clientId: string;
  secret: string;
  returnUrl: string;
}

export async function seedVerifiedSessions(
  emulatorUrl: string,
  client: SeedClient,
  count: number,
  userRefOf: (index: number) => string,
  options: { concurrency?: number; maxMs?: number } = {},
): Promise<SeedAttempt[]> {
  const concurrency = options.concurrency ?? 16;
  const loop = {
    pool: loadPool(new URL(emulatorUrl).origin, concurrency),
    concurrency,
    maxMs: options.maxMs ?? 600_000,
  };
  try {
    const attempts = await createSessions(loop, client, count, userRefOf);
    await completeSessions(loop, attempts);
    return attempts;
  } finally {
    await loop.pool.close();
  }
}

interface SeedLoop {
  pool: ReturnType<typeof loadPool>;
  concurrency: number;
  maxMs: number;
}

/** POST /session for each attempt, with a fresh state; throws unless every one was created. */
async function createSessions(
  loop: SeedLoop,
  client: SeedClient,
  count: number,
  userRefOf: (index: number) => string,
): Promise<SeedAttempt[]> {
  const authorization = basicAuthorization(client.clientId, client.secret);
  const attempts: (SeedAttempt | undefined)[] = new Array(count);
  const created = await closedLoop({
    ...loop,
    total: count,
    expectStatus: 200,
    request: (i) => {
      const userRef = userRefOf(i);
      const state = newState();
      attempts[i] = { state, sessionId: '', userRef };
      return {
        method: 'POST',
        path: '/session',
        headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          returnUrl: client.returnUrl,
          channel: 'sms',
          destination: destinationOf(userRef),
          operationSensitivity: 'normal',
          userRef,
          state,
          platform: 'web',
        }),
      };
    },
    onBody: (i, status, body) => {
      if (status === 200) attempts[i]!.sessionId = (JSON.parse(body) as { sessionId: string }).sessionId;
    },
  });
  if (created.ok !== count)
    throw new Error(`seeding: ${created.ok} of ${count} sessions created (${JSON.stringify(created.statuses)})`);
  return attempts as SeedAttempt[];
}

/** Ends every session as verified through the control API; throws unless every one was. */
async function completeSessions(loop: SeedLoop, done: SeedAttempt[]): Promise<void> {
  const count = done.length;
  const completed = await closedLoop({
    ...loop,
    total: count,
    expectStatus: 200,
    request: (i) => ({
      method: 'POST',
      path: `/_control/sessions/${encodeURIComponent(done[i]!.sessionId)}/complete`,
      headers: { 'content-type': 'application/json' },
      body: '{"outcome":"verified"}',
    }),
  });
  if (completed.ok !== count)
    throw new Error(`seeding: ${completed.ok} of ${count} sessions completed (${JSON.stringify(completed.statuses)})`);
}

/** POST /_control/reset: clears the emulator's sessions, outbox, idempotency keys and stats. */
export async function resetEmulator(emulatorUrl: string): Promise<void> {
  const response = await fetch(`${emulatorUrl}/_control/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  if (!response.ok) throw new Error(`emulator reset answered ${response.status}`);
  await response.arrayBuffer();
}

/**
 * A SQLite file for a sweep bench: the kit's tables and bench_grants, every session a due attempt
 * (inserted through the kit's store in one transaction), the WAL folded into the file.
 */
export async function writeDueAttempts(path: string, sessions: readonly SeedAttempt[]): Promise<void> {
  const store = createSqliteStore({ database: path });
  store.db.exec(
    'CREATE TABLE IF NOT EXISTS bench_grants (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_ref TEXT NOT NULL)',
  );
  const now = Date.now();
  store.db.transaction(() => {
    for (const s of sessions) void store.insertAttempt(dueAttempt(s, now));
  })();
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  await store.close();
}
