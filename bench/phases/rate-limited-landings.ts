/**
 * The rate-limited phase's landings: a kit app on the sweeps' database and client, and the
 * landings' attempts seeded through it, enough for each round.
 */
import type { SeedAttempt } from '../common.ts';
import { config } from '../config.ts';
import type { Child } from '../ipc.ts';
import { log } from '../measure.ts';
import type { TestDatabase } from '../postgres.ts';
import type { SeedClient } from '../seed.ts';
import { seedSide, spawnApp, type Side } from './sides.ts';

export const LANDER = 'bench-rl-lander';

/** A kit app on the sweeps' database and client: the landings share their store and their rate limit. */
export async function landingApp(emulatorUrl: string, client: SeedClient, database: TestDatabase, children: Child[]) {
  const { child, port } = await spawnApp('kit', children);
  await child.call('configure', {
    emulatorUrl,
    clientId: client.clientId,
    secret: client.secret,
    returnUrl: client.returnUrl,
    dbPath: '',
    databaseUrl: database.url,
  });
  // Where the slow landings' time went, on each side (landing-times.ts).
  await child.call('recordLandingTimes');
  const side: Side = { name: 'kit', child, origin: `http://127.0.0.1:${port}`, client };
  return side;
}

/**
 * Seeds `count` landings' attempts through the app, then moves their first sweep read an hour on:
 * the rounds outlast the app's 3 minutes, and the sweeps leave these attempts to the landings.
 */
export async function seedLandings(emulatorUrl: string, side: Side, database: TestDatabase, count: number) {
  const landings = await seedSide(emulatorUrl, side, count, () => LANDER);
  await database.pool.query(
    'UPDATE verify_kit_attempts SET next_check_at = next_check_at + 3600000 WHERE user_ref = $1',
    [LANDER],
  );
  await database.pool.query('VACUUM ANALYZE verify_kit_attempts');
  return landings;
}

/**
 * Landings for the warm-up and the first round: its streams alone, and beside the kit's sweep and
 * the floor, each at half the kit's target rate. Later rounds top up from what the round before used.
 */
export function firstLandings(): number {
  const sweepSeconds =
    (2 * config.rateLimitedSize) /
    config.rateLimitedRounds /
    (0.5 * Math.max(1, config.rateLimit - config.rateLimitedLandings));
  const aloneSeconds = (config.rateLimitedWarmUpMs + 1.5 * config.rateLimitedAloneMs) / 1000;
  return Math.ceil(config.rateLimitedLandings * (aloneSeconds + sweepSeconds));
}

/** A round may take half as long again as the one before (a loaded machine): it never runs out. */
const ROUND_MARGIN = 1.5;

/** Before a round: landings enough for ROUND_MARGIN times what the round before used. */
export async function topUpLandings(
  emulatorUrl: string,
  side: Side,
  database: TestDatabase,
  landings: SeedAttempt[],
  lastUsed: number,
): Promise<void> {
  const missing = Math.ceil(ROUND_MARGIN * lastUsed) - landings.length;
  if (missing <= 0) return;
  landings.push(...(await seedLandings(emulatorUrl, side, database, missing)));
  log(`rate-limited: seeded ${missing} more landings (the round before used ${lastUsed})`);
}
