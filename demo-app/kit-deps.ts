/**
 * The demo's sweep kit, built from the same environment as the app: the same database (the SQLite
 * file, or PostgreSQL when DATABASE_URL is set), the same actions (so the sweep fulfils exactly as
 * the landing does), the same credentials and onOutcome hook. It mounts no route: it only sweeps.
 * Used by the copyable job (sweep-job.ts).
 */
import { createVerificationKit, type SweepJobSettings, type VerificationKit } from 'hosted-sms-verify-kit';
import { createDemoActions } from './actions.ts';
import { endGrantsAfterPhoneChange } from './after-phone-change.ts';
import { loadConfig } from './config.ts';
import { openDemoData } from './data.ts';

export function demoSweepKit(env: NodeJS.ProcessEnv, job?: SweepJobSettings): VerificationKit<unknown> {
  const config = loadConfig(env);
  // With VERIFY_BASE_URL empty the demo runs the bundled emulator on 127.0.0.1:EMULATOR_PORT.
  const baseUrl = config.verifyBaseUrl ?? `http://127.0.0.1:${config.emulatorPort}`;
  const data = openDemoData({ databasePath: config.databasePath, databaseUrl: config.databaseUrl });
  const kit: VerificationKit<unknown> = createVerificationKit<unknown>({
    baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    returnUrl: config.returnUrl,
    // A connection to the service per status read the job keeps in flight, no more.
    ...(job === undefined ? {} : { client: { connections: job.concurrency } }),
    // The job closes what it built when it ends: the SQLite file or the PostgreSQL pool.
    store: { ...data.store, close: () => data.close() },
    actions: createDemoActions(data.reads, data.writes),
    // Nobody signs in to a job, and it serves no route.
    resolveUser: () => null,
    routes: { start: false, landing: false },
    // The same hook as the app: the sweep re-delivers what the app could not.
    onOutcome: endGrantsAfterPhoneChange(data.onOutcome, () => kit),
  });
  return kit;
}
