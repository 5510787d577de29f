/** The landing on PostgreSQL: the same two apps, the kit on its PostgreSQL store and the baseline on plain node-postgres. */
import type { Child } from '../ipc.ts';
import { createTestDatabase } from '../postgres.ts';
import type { SeedClient } from '../seed.ts';
import type { Comparison } from './interleaved.ts';
import { landingPhase } from './landing.ts';
import { sidesOf, type AppPair } from './sides.ts';

/** Configures `apps` on two scratch databases, measures the landing, then stops the apps and drops the databases. */
export async function pgLandingPhase(
  emulatorUrl: string,
  emulator: Child,
  apps: AppPair,
  clients: [SeedClient, SeedClient],
): Promise<Comparison> {
  const [kitDb, baseDb] = await Promise.all([createTestDatabase({ max: 1 }), createTestDatabase({ max: 1 })]);
  try {
    const [pgKit, pgBase] = clients;
    const configure = (c: SeedClient, databaseUrl: string) => ({
      emulatorUrl,
      clientId: c.clientId,
      secret: c.secret,
      returnUrl: c.returnUrl,
      dbPath: '',
      databaseUrl,
    });
    await apps.kit.call('configure', configure(pgKit, kitDb.url));
    await apps.baseline.call('configure', configure(pgBase, baseDb.url));
    return await landingPhase(emulatorUrl, emulator, sidesOf(apps, pgKit, pgBase), 'pg-landing');
  } finally {
    await apps.kit.stop();
    await apps.baseline.stop();
    await kitDb.drop();
    await baseDb.drop();
  }
}
