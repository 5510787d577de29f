/**
 * A start with the SMS pumping rules on, through the route, on PostgreSQL: the attempt and the
 * record of its text's send commit in one statement (test/store/postgres-start-writes.test.ts
 * proves the store joins them when both are asked for in one turn). The route must ask for them so:
 * one that awaited the insert before recording the send would go back to two round trips and two
 * commits per start, with nothing else failing. Rows written by one statement share their `xmin`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPhoneAction } from '../support/actions.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

describe.skipIf(postgresUnavailable !== undefined)('a start on PostgreSQL with the SMS pumping rules on', () => {
  let database: TestDatabase;
  let app: TestApp;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startTestApp({
      database: { url: database.url },
      kit: { actions: [addPhoneAction()], pumping: { mode: 'record' } },
    });
  });
  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  it("writes its attempt and its text's send in one transaction", async () => {
    const user = await app.agent().signIn('joined');
    expect((await user.tryStartWithNumber('add_phone', '+2348031000001')).status).toBe(200);
    const { rows } = await database.pool.query<{ attempt: string; send: string }>(
      `SELECT a.xmin::text AS attempt, s.xmin::text AS send
         FROM verify_kit_attempts a JOIN verify_kit_pumping_sends s USING (session_id)
        WHERE a.user_ref = $1`,
      ['user-joined'],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.send).toBe(rows[0]!.attempt);
  });
});
