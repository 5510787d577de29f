/**
 * The demo's recovery codes (the Security page): once replaced, a set never comes back, whatever
 * the user does afterwards. The codes are read as the page reads them, from the demo's database,
 * on SQLite and on PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDemoData, type DemoData } from '../../demo-app/data.ts';
import { CONFIRM_PHONE, NEW_RECOVERY_CODES } from '../../demo-app/domain.ts';
import { currentRecoveryCodes } from '../../demo-app/recovery-codes.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

const SECRET = 'recovery-codes-test-secret';
const USER = 'usr_bob';

function recoveryCodesSuite(name: string, open: () => Promise<DemoData>) {
  describe(name, () => {
    let data: DemoData;
    let at = 1_000;
    beforeAll(async () => {
      data = await open();
    });
    afterAll(async () => data?.close());

    const record = (action: string, sessionId: string) =>
      data.recordOwnActivity({ userId: USER, sessionId, action, detail: action, at: at++ });

    it('replaced codes stay replaced after 100 and more later entries in the Activity list', async () => {
      const first = await currentRecoveryCodes(data.reads, SECRET, USER);
      await record(NEW_RECOVERY_CODES, 'codes_1');
      const second = await currentRecoveryCodes(data.reads, SECRET, USER);
      expect(second).not.toEqual(first);

      for (let i = 0; i < 100; i++) await record(CONFIRM_PHONE, `ses_confirm_${i}`);
      const later = await currentRecoveryCodes(data.reads, SECRET, USER);
      expect({ backToReplacedSet: later.join(' ') === first.join(' '), sameAsAfterReplacing: later }).toEqual({
        backToReplacedSet: false,
        sameAsAfterReplacing: second,
      });
    });

    it('every replacement gives a new set, however many came before', async () => {
      const seen = new Set([(await currentRecoveryCodes(data.reads, SECRET, USER)).join(' ')]);
      for (let i = 2; i <= 102; i++) {
        await record(NEW_RECOVERY_CODES, `codes_${i}`);
        seen.add((await currentRecoveryCodes(data.reads, SECRET, USER)).join(' '));
      }
      expect(seen.size).toBe(102);
    });
  });
}

recoveryCodesSuite('on SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-recovery-codes-'));
  const data = openDemoData({ databasePath: join(dir, 'demo.sqlite') });
  return {
    ...data,
    async close() {
      await data.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe.skipIf(postgresUnavailable !== undefined)('PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  recoveryCodesSuite('on PostgreSQL', async () => openDemoData({ databasePath: '', databaseUrl: database.url }));
});
