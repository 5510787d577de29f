/**
 * The demo's confirm_phone fulfilled after the user's number changed: a confirmation started on the
 * old number (a tab left open, or a verification the sweep settles later) must not make that number
 * the account's verified one, nor take the verification away from the number the user changed to.
 * The actions run in a transaction of the demo's database, as the kit runs them, on SQLite and on
 * PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VerifiedAttempt } from 'hosted-sms-verify-kit';
import type pg from 'pg';
import type { Database } from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoActions } from '../../demo-app/actions.ts';
import { openDemoData, type DemoData } from '../../demo-app/data.ts';
import { CHANGE_PHONE, CONFIRM_PHONE } from '../../demo-app/domain.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

const OLD_NUMBER = '+15550100001';
const NEW_NUMBER = '+15550100099';

function verified(sessionId: string, action: string, destination: string): VerifiedAttempt {
  return {
    sessionId,
    state: `state-${sessionId}`,
    userRef: 'usr_alice',
    action,
    params: {},
    destination,
    startedAt: 1,
  };
}

/** Runs an action's fulfil in one transaction of the demo's database, as the kit does. */
type InTransaction = (fulfil: (tx: unknown) => unknown) => Promise<void>;

function staleConfirmSuite(name: string, open: () => Promise<{ data: DemoData; inTransaction: InTransaction }>) {
  describe(name, () => {
    let data: DemoData;
    let inTransaction: InTransaction;
    beforeAll(async () => {
      ({ data, inTransaction } = await open());
    });
    afterAll(async () => data?.close());

    it('a confirmation of the old number landing after the change leaves the new number verified, and says so', async () => {
      const [confirmPhone, , changePhone] = createDemoActions(data.reads, data.writes, () => 5_000);
      // The change to the new number is fulfilled first; the confirmation started on the old one lands after.
      await inTransaction((tx) => changePhone!.fulfil(tx, verified('ses_change', CHANGE_PHONE, NEW_NUMBER)));
      await inTransaction((tx) => confirmPhone!.fulfil(tx, verified('ses_old_confirm', CONFIRM_PHONE, OLD_NUMBER)));

      const alice = await data.reads.user('usr_alice');
      expect({ phone: alice?.phone, verifiedPhone: alice?.verifiedPhone }).toEqual({
        phone: NEW_NUMBER,
        verifiedPhone: NEW_NUMBER,
      });
      const entry = (await data.reads.activity('usr_alice')).find((e) => e.sessionId === 'ses_old_confirm');
      expect(entry?.detail).toBe('Not confirmed: ••\u00a001 is no longer this account’s number');
      expect(entry?.detail).not.toContain(OLD_NUMBER);
    });

    it('a confirmation of the current number still confirms it', async () => {
      const [confirmPhone] = createDemoActions(data.reads, data.writes, () => 6_000);
      await inTransaction((tx) => confirmPhone!.fulfil(tx, verified('ses_confirm_now', CONFIRM_PHONE, NEW_NUMBER)));
      const alice = await data.reads.user('usr_alice');
      expect(alice?.verifiedPhone).toBe(NEW_NUMBER);
      expect(alice?.phoneVerifiedAt).toBe(6_000);
      const entry = (await data.reads.activity('usr_alice')).find((e) => e.sessionId === 'ses_confirm_now');
      expect(entry?.detail).toBe('Confirmed ••\u00a099');
    });

    it('a confirmation for a user who no longer exists still fails, writing nothing', async () => {
      const [confirmPhone] = createDemoActions(data.reads, data.writes, () => 7_000);
      const gone = { ...verified('ses_gone', CONFIRM_PHONE, OLD_NUMBER), userRef: 'usr_gone' };
      await expect(inTransaction((tx) => confirmPhone!.fulfil(tx, gone))).rejects.toThrow(/no longer exists/);
      expect(await data.reads.activity('usr_gone')).toEqual([]);
    });
  });
}

staleConfirmSuite('on SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-stale-confirm-'));
  const data = openDemoData({ databasePath: join(dir, 'demo.sqlite') });
  const db = data.db as Database;
  return {
    data: {
      ...data,
      async close() {
        await data.close();
        rmSync(dir, { recursive: true, force: true });
      },
    },
    // SQLite's transaction is synchronous, as the kit's is.
    inTransaction: async (fulfil) => {
      db.transaction(() => {
        const result = fulfil(db);
        if (result instanceof Promise) throw new Error('a SQLite fulfil must be synchronous');
      })();
    },
  };
});

describe.skipIf(postgresUnavailable !== undefined)('PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  staleConfirmSuite('on PostgreSQL', async () => {
    const data = openDemoData({ databasePath: '', databaseUrl: database.url });
    await data.reads.users(); // the demo's migration has run
    const inTransaction: InTransaction = async (fulfil) => {
      const client: pg.PoolClient = await database.pool.connect();
      try {
        await client.query('BEGIN');
        await fulfil(client);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    };
    return { data, inTransaction };
  });
});
