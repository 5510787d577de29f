/**
 * The demo's sweep dependencies built from the same environment as the app: the same SQLite
 * file, the same actions (so the sweep fulfils exactly as the landing does), a backend client
 * with the same credentials. Used by the copyable job (sweep-job.ts).
 */
import type { Database } from 'better-sqlite3';
import { createSqliteStore, createVerifyClient } from 'hosted-sms-verify-kit';
import type { SweepJobDeps } from 'hosted-sms-verify-kit';
import { createDemoActions } from './actions.ts';
import { loadConfig } from './config.ts';
import { createQueries, openDemoDatabase } from './db.ts';
import { createOutboxHook } from './outbox.ts';

export function demoSweepDeps(env: NodeJS.ProcessEnv): SweepJobDeps<Database> {
  const config = loadConfig(env);
  // With VERIFY_BASE_URL empty the demo runs the bundled emulator on 127.0.0.1:EMULATOR_PORT.
  const baseUrl = config.verifyBaseUrl ?? `http://127.0.0.1:${config.emulatorPort}`;
  const db = openDemoDatabase(config.databasePath);
  const store = createSqliteStore({ database: db });
  const actions = createDemoActions(createQueries(db));
  return {
    client: createVerifyClient({ baseUrl, clientId: config.clientId, clientSecret: config.clientSecret }),
    // The store does not own a Database it was handed; the job closes the file when it ends.
    store: {
      ...store,
      async close() {
        if (db.open) db.close();
      },
    },
    actions: new Map(actions.map((action) => [action.name, action])),
    // The same hook as the app: the sweep re-delivers what the app could not.
    onOutcome: createOutboxHook(db),
    now: Date.now,
  };
}
