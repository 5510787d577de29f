/**
 * Every phase BENCH_ONLY names, in order, on processes they share: the kit and baseline apps (and
 * their PostgreSQL pair), and the emulator with one client per app and one for the sweeps.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { config } from '../config.ts';
import { spawnChild, type Child } from '../ipc.ts';
import type { SeedClient } from '../seed.ts';
import { dayPhase, type DayFigures } from './day.ts';
import { duplicatesPhase, type DuplicateFigures } from './duplicates.ts';
import type { Comparison } from './interleaved.ts';
import { landingPhase } from './landing.ts';
import { pgLandingPhase } from './pg-landing.ts';
import { pumpingPhase, type PumpingFigures } from './pumping.ts';
import { pumpingCostPhase, type PumpingCostFigures } from './pumping-cost.ts';
import { pumpingReplayPhase, type ReplayFigures } from './pumping-replay.ts';
import { pgSweepPhase, type PgSweepFigures } from './pg-sweep.ts';
import { rateLimitedPhase } from './rate-limited.ts';
import type { RateLimitedFigures } from './rate-limited-figures.ts';
import { sidesOf, spawnAppPair, type AppPair } from './sides.ts';
import { startPhase } from './start.ts';
import { numberLibraryCost, startEnteredPhase, type NumberLibraryCost } from './start-entered.ts';
import { sweepPhase, type SweepFigures } from './sweep.ts';

export interface BenchResults {
  day?: DayFigures;
  pumping?: PumpingFigures;
  /** A slice of the month replayed through both stores: every decision equal to the model's. */
  pumpingReplay?: ReplayFigures;
  /** Starts with the pumping rules on over the same kit with them off, on SQLite and PostgreSQL. */
  pumpingCost?: PumpingCostFigures;
  landing?: Comparison;
  start?: Comparison;
  /** A start with a typed number, and what loading the number library costs a process. */
  startEntered?: Comparison;
  numberLibrary?: NumberLibraryCost;
  duplicates?: DuplicateFigures[];
  rateLimited?: RateLimitedFigures;
  sweep?: SweepFigures[];
  pgLanding?: Comparison;
  pgSweep?: PgSweepFigures;
}

interface BenchClients {
  kit: SeedClient;
  baseline: SeedClient;
  sweep: SeedClient;
  pg: [SeedClient, SeedClient] | undefined;
}

/** Runs the phases; every process it starts is added to `children`, which the caller stops; `dir` holds the files. */
export async function runPhases(dir: string, children: Child[]): Promise<BenchResults> {
  const results: BenchResults = {};
  // In-process on its own emulator and virtual clock, before the shared processes start.
  if (config.phases.includes('day')) results.day = await dayPhase();
  if (config.phases.includes('pumping')) results.pumping = pumpingPhase();
  if (config.phases.includes('pumping-replay')) results.pumpingReplay = await pumpingReplayPhase();
  // Its own apps and emulator, stopped before the shared ones start.
  if (config.phases.includes('pumping-cost')) results.pumpingCost = await pumpingCostPhase(dir, children);
  const ownProcesses = new Set<string>(['day', 'pumping', 'pumping-replay', 'pumping-cost']);
  if (config.phases.every((phase) => ownProcesses.has(phase))) return results;
  // In fresh processes, before the apps start: the machine is as quiet as the bench gets.
  if (config.phases.includes('start-entered')) results.numberLibrary = await numberLibraryCost();
  const apps = await spawnAppPair(children);
  // The same two apps on PostgreSQL (the kit's store; the baseline on plain node-postgres).
  const pgApps = config.phases.includes('pg-landing') ? await spawnAppPair(children) : undefined;
  const clients = benchClients(apps, pgApps);
  const emulator = spawnChild('./children/emulator-child.ts', 'emulator');
  children.push(emulator);
  const all = [clients.kit, clients.baseline, clients.sweep, ...(clients.pg ?? [])];
  const { url: emulatorUrl } = await emulator.call<{ url: string }>('start', { clients: all }, 60_000);
  await apps.kit.call('configure', appArgs(emulatorUrl, clients.kit, join(dir, 'kit.sqlite')));
  await apps.baseline.call('configure', appArgs(emulatorUrl, clients.baseline, join(dir, 'baseline.sqlite')));
  const sides = sidesOf(apps, clients.kit, clients.baseline);

  if (config.phases.includes('landing')) results.landing = await landingPhase(emulatorUrl, emulator, sides);
  if (config.phases.includes('start')) results.start = await startPhase(emulatorUrl, emulator, sides);
  if (config.phases.includes('start-entered'))
    results.startEntered = await startEnteredPhase(emulatorUrl, emulator, sides);
  if (config.phases.includes('duplicates')) results.duplicates = await duplicatesPhase(emulatorUrl, sides);
  if (config.phases.includes('rate-limited')) results.rateLimited = await rateLimitedPhase(emulatorUrl, clients.kit);
  await apps.kit.stop();
  await apps.baseline.stop();
  if (config.phases.includes('sweep')) results.sweep = await sweepPhase(emulatorUrl, emulator, clients.sweep, dir);
  if (pgApps !== undefined && clients.pg !== undefined)
    results.pgLanding = await pgLandingPhase(emulatorUrl, emulator, pgApps, clients.pg);
  if (config.phases.includes('pg-sweep')) results.pgSweep = await pgSweepPhase(emulatorUrl, emulator, clients.sweep);
  return results;
}

/** One emulator client per app, each with the app's returnUrl, and one for the sweeps (which no browser returns to). */
function benchClients(apps: AppPair, pgApps: AppPair | undefined): BenchClients {
  // Random per run; passed to children only over IPC; never printed or written.
  const secret = () => `bench-${randomBytes(24).toString('base64url')}`;
  const returnUrl = (port: number) => `http://localhost:${port}/verify/return`;
  return {
    kit: { clientId: 'bench-kit', secret: secret(), returnUrl: returnUrl(apps.ports[0]) },
    baseline: { clientId: 'bench-baseline', secret: secret(), returnUrl: returnUrl(apps.ports[1]) },
    sweep: { clientId: 'bench-sweep', secret: secret(), returnUrl: 'http://localhost:9/verify/return' },
    pg:
      pgApps === undefined
        ? undefined
        : [
            { clientId: 'bench-pg-kit', secret: secret(), returnUrl: returnUrl(pgApps.ports[0]) },
            { clientId: 'bench-pg-baseline', secret: secret(), returnUrl: returnUrl(pgApps.ports[1]) },
          ],
  };
}

/** What an app on a SQLite file is configured with. */
function appArgs(emulatorUrl: string, client: SeedClient, dbPath: string) {
  return { emulatorUrl, clientId: client.clientId, secret: client.secret, returnUrl: client.returnUrl, dbPath };
}
