/**
 * Suites that start the test app (startTestApp) once per store: SQLite, and PostgreSQL on scratch
 * databases dropped when the suite ends (after the suite's own afterAll closed its apps). A missing
 * PostgreSQL skips with its reason here and fails in CI (test/support/postgres.ts).
 */
import { afterAll, describe, it } from 'vitest';
import type { TestAppOptions } from './app.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from './postgres.ts';

export type AppStoreName = 'sqlite' | 'postgres';

/** What startTestApp needs to run on the suite's store: a new database per call on PostgreSQL. */
export type StoreOptions = () => Promise<Pick<TestAppOptions, 'database'>>;

const KINDS: { name: AppStoreName; unavailable: string | undefined }[] = [
  { name: 'sqlite', unavailable: undefined },
  { name: 'postgres', unavailable: postgresUnavailable },
];

export function describeEachAppStore(
  title: string,
  body: (store: AppStoreName, storeOptions: StoreOptions) => void,
): void {
  describe.each(KINDS)(`${title} on $name`, (kind) => {
    if (kind.unavailable !== undefined) {
      it.skip(`not run: ${kind.unavailable}`, () => {});
      return;
    }
    const databases: TestDatabase[] = [];
    afterAll(async () => {
      for (const database of databases.splice(0)) await database.drop();
    });
    body(kind.name, async () => {
      if (kind.name === 'sqlite') return {};
      const database = await createTestDatabase();
      databases.push(database);
      return { database: { url: database.url } };
    });
  });
}
