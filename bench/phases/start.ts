/** Start: POST /verify/start with a CSRF token, one signed-in user per connection, kit against baseline. */
import { ACTION } from '../common.ts';
import type { Child } from '../ipc.ts';
import type { LoadRequest } from '../load.ts';
import { config } from '../config.ts';
import { resetEmulator } from '../seed.ts';
import { interleaved, type Comparison } from './interleaved.ts';
import { login, type Side } from './sides.ts';

export async function startPhase(emulatorUrl: string, emulator: Child, sides: [Side, Side]): Promise<Comparison> {
  await resetEmulator(emulatorUrl);
  // One signed-in user (own cookie jar, own CSRF token, own destination) per worker and side.
  const jars = new Map<string, { cookie: string; csrf: string }[]>();
  for (const side of sides) {
    const list = [];
    for (let w = 0; w < config.concurrency; w++) list.push(await login(side, `bench-starter-${side.name}-${w}`));
    jars.set(side.name, list);
  }
  const startRequest = (side: Side, worker: number): LoadRequest => {
    const jar = jars.get(side.name)![worker]!;
    return {
      method: 'POST',
      path: '/verify/start',
      headers: { cookie: jar.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `action=${ACTION}&_csrf=${encodeURIComponent(jar.csrf)}`,
    };
  };
  // Sanity: each side answers a page that posts a handoff to the emulator's verifyUrl.
  for (const side of sides) {
    const req = startRequest(side, 0);
    const response = await fetch(`${side.origin}${req.path}`, {
      method: 'POST',
      headers: req.headers,
      body: req.body ?? null,
      redirect: 'manual',
    });
    const text = await response.text();
    if (response.status !== 200 || !text.includes(`${emulatorUrl}/verify`) || !text.includes('name="hx"')) {
      throw new Error(`start sanity check failed for ${side.name}: ${response.status}`);
    }
  }
  return interleaved('start', sides, emulator, 200, (side, _i, worker) => startRequest(side, worker));
}
