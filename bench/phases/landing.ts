/** Landing: GET /verify/return for a verified, not yet fulfilled attempt, one attempt per request, kit against baseline. */
import { performance } from 'node:perf_hooks';
import { config } from '../config.ts';
import { SUCCESS_PATH, type SeedAttempt } from '../common.ts';
import type { Child } from '../ipc.ts';
import { log } from '../measure.ts';
import { resetEmulator } from '../seed.ts';
import { interleaved, type Comparison } from './interleaved.ts';
import { landingPath, login, seedSide, type Side } from './sides.ts';

export async function landingPhase(
  emulatorUrl: string,
  emulator: Child,
  sides: [Side, Side],
  what = 'landing',
): Promise<Comparison> {
  await resetEmulator(emulatorUrl);
  const perSide = config.warmupRequests + config.rounds * config.roundRequests + 1;
  const lander = 'bench-lander';
  const seeded = new Map<string, SeedAttempt[]>();
  const cookies = new Map<string, string>();
  for (const side of sides) {
    const t0 = performance.now();
    seeded.set(side.name, await seedSide(emulatorUrl, side, perSide, () => lander));
    log(
      `landing: seeded ${perSide} verified sessions + attempts for ${side.name} in ${Math.round(performance.now() - t0)} ms`,
    );
    cookies.set(side.name, (await login(side, lander)).cookie);
  }
  // Sanity: one landing each answers 303 to the stored path (the last seeded attempt, not used below).
  for (const side of sides) {
    const attempt = seeded.get(side.name)!.at(-1)!;
    const response = await fetch(`${side.origin}${landingPath(attempt)}`, {
      headers: { cookie: cookies.get(side.name)! },
      redirect: 'manual',
    });
    await response.arrayBuffer();
    if (response.status !== 303 || response.headers.get('location') !== SUCCESS_PATH) {
      throw new Error(
        `landing sanity check failed for ${side.name}: ${response.status} ${response.headers.get('location')}`,
      );
    }
  }
  const before = new Map<string, { grants: number }>();
  for (const side of sides) before.set(side.name, await side.child.call('counts'));
  const result = await interleaved(what, sides, emulator, 303, (side, i) => ({
    method: 'GET',
    path: landingPath(seeded.get(side.name)![i]!),
    headers: { cookie: cookies.get(side.name)! },
  }));
  // Every measured landing fulfilled its own attempt exactly once.
  for (const side of sides) {
    const after = await side.child.call<{ grants: number }>('counts');
    const grants = after.grants - before.get(side.name)!.grants;
    const expected = config.warmupRequests + (side.name === 'kit' ? result.kit.ok : result.baseline.ok);
    if (grants !== expected)
      log(`landing: WARNING ${side.name} made ${grants} grants for ${expected} successful landings`);
  }
  return result;
}
