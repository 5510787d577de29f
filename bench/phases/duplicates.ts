/** Duplicates: many concurrent landings for ONE verified attempt, which must be fulfilled exactly once. */
import { config } from '../config.ts';
import { closedLoop, loadPool, percentile, sortedCopy } from '../load.ts';
import { round2 } from '../measure.ts';
import { resetEmulator } from '../seed.ts';
import { landingPath, login, seedSide, type Side } from './sides.ts';

export interface DuplicateFigures {
  side: string;
  requests: number;
  statuses: Record<string, number>;
  fulfilments: number;
  p50: number;
  p99: number;
  max: number;
}

export async function duplicatesPhase(emulatorUrl: string, sides: [Side, Side]): Promise<DuplicateFigures[]> {
  await resetEmulator(emulatorUrl);
  const out: DuplicateFigures[] = [];
  for (const side of sides) {
    const [attempt] = await seedSide(emulatorUrl, side, 1, () => 'bench-lander');
    const { cookie } = await login(side, 'bench-lander');
    const before = await side.child.call<{ grants: number }>('counts');
    const pool = loadPool(side.origin, config.duplicates);
    try {
      const result = await closedLoop({
        pool,
        concurrency: config.duplicates,
        total: config.duplicates,
        maxMs: 60_000,
        expectStatus: 303,
        request: () => ({ method: 'GET', path: landingPath(attempt!), headers: { cookie } }),
      });
      const after = await side.child.call<{ grants: number }>('counts');
      const sorted = sortedCopy(result.latenciesMs);
      out.push({
        side: side.name,
        requests: result.ok + result.errors,
        statuses: result.statuses,
        fulfilments: after.grants - before.grants,
        p50: round2(percentile(sorted, 50)),
        p99: round2(percentile(sorted, 99)),
        max: round2(sorted.at(-1) ?? Number.NaN),
      });
    } finally {
      await pool.close();
    }
  }
  return out;
}
