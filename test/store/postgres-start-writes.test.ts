/**
 * The start's two writes on the PostgreSQL store: its attempt and the record of its text's send,
 * asked for in one turn as the start asks for them, go in one statement; each still settles as its
 * own when that statement fails, and a send no attempt takes is written alone.
 */
import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { PumpingKey } from '../../middleware/store/types.ts';
import { newAttempt } from '../support/attempts.ts';
import { createTestDatabase, postgresUnavailable, recordingPool, type TestDatabase } from '../support/postgres.ts';

const keys: PumpingKey[] = [
  { dimension: 'country', key: 'GB' },
  { dimension: 'user', key: 'user-a' },
];

let database: TestDatabase;
let store: PostgresStore;
let pool: pg.Pool;
let sent: string[];

/** A store on a pool of one connection that records every statement sent on it. */
async function recordingStore(): Promise<PostgresStore> {
  ({ pool, sent } = recordingPool(database.url));
  const recording = createPostgresStore({ pool });
  await recording.ready;
  sent.length = 0;
  return recording;
}

async function sendsOf(sessionId: string) {
  const { rows } = await database.pool.query<{ hour: number; dimensions: string[]; keys: string[] }>(
    'SELECT hour, dimensions, keys FROM verify_kit_pumping_sends WHERE session_id = $1',
    [sessionId],
  );
  return rows;
}

describe.skipIf(postgresUnavailable !== undefined)("PostgreSQL store: the start's attempt and its send", () => {
  beforeEach(async () => {
    database = await createTestDatabase();
    store = await recordingStore();
  });
  afterEach(async () => {
    await pool.end().catch(() => {});
    await database.drop();
  });

  it('writes the attempt and the send asked for in one turn in one statement', async () => {
    const attempt = newAttempt(1);
    await Promise.all([
      store.insertAttempt(attempt),
      store.pumping.attachSend({ sessionId: attempt.sessionId, keys, hour: 7 }),
    ]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('verify_kit_pumping_sends');
    expect(await store.findAttemptByState(attempt.state)).toMatchObject({ sessionId: attempt.sessionId });
    expect(await sendsOf(attempt.sessionId)).toEqual([
      { hour: 7, dimensions: ['country', 'user'], keys: ['GB', 'user-a'] },
    ]);
  });

  it('still writes the send when the attempt cannot be inserted, and fails the insert alone', async () => {
    await store.insertAttempt(newAttempt(1));
    // The same state again: the attempt's insert fails, and with it the statement that held the send.
    const again = newAttempt(1, { sessionId: 'session-again' });
    const inserted = store.insertAttempt(again);
    const attached = store.pumping.attachSend({ sessionId: 'session-again', keys, hour: 7 });
    await expect(inserted).rejects.toThrow(/duplicate key/);
    await expect(attached).resolves.toBeUndefined();
    expect(await sendsOf('session-again')).toHaveLength(1);
  });

  it('writes alone a send no attempt takes, and an attempt with no send as before', async () => {
    await store.pumping.attachSend({ sessionId: 'session-9', keys, hour: 7 });
    await store.insertAttempt(newAttempt(2));
    expect(sent).toHaveLength(2);
    expect(sent[1]).not.toContain('verify_kit_pumping_sends');
    expect(await sendsOf('session-9')).toHaveLength(1);
    expect(await sendsOf('session-2')).toEqual([]);
  });
});
