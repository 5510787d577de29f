/**
 * The demo's sweep dependencies built from the same environment as the app: the same database
 * (the SQLite file, or PostgreSQL when DATABASE_URL is set), the same actions (so the sweep
 * fulfils exactly as the landing does), a backend client with the same credentials. Used by the
 * copyable job (sweep-job.ts).
 */
import { createVerifyClient } from 'hosted-sms-verify-kit';
import type { SweepJobDeps } from 'hosted-sms-verify-kit';
import { createDemoActions } from './actions.ts';
import { loadConfig } from './config.ts';
import { openDemoData } from './data.ts';

export function demoSweepDeps(env: NodeJS.ProcessEnv): SweepJobDeps<unknown> {
  const config = loadConfig(env);
  // With VERIFY_BASE_URL empty the demo runs the bundled emulator on 127.0.0.1:EMULATOR_PORT.
  const baseUrl = config.verifyBaseUrl ?? `http://127.0.0.1:${config.emulatorPort}`;
  const data = openDemoData({ databasePath: config.databasePath, databaseUrl: config.databaseUrl });
  const actions = createDemoActions(data.reads, data.writes);
  return {
    client: createVerifyClient({ baseUrl, clientId: config.clientId, clientSecret: config.clientSecret }),
    // The job closes what it built when it ends: the SQLite file or the PostgreSQL pool.
    store: { ...data.store, close: () => data.close() },
    actions: new Map(actions.map((action) => [action.name, action])),
    // The same hook as the app: the sweep re-delivers what the app could not.
    onOutcome: data.onOutcome,
    now: Date.now,
  };
}
