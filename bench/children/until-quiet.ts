/**
 * Waits until this process has settled after opening its store: the SQLite store starts its WAL
 * checkpoint worker on a thread of its own, which boots (about 0.1 s of CPU: Node's bootstrap, the
 * driver loaded again) while the caller goes on. That is the store's opening, as its migrations and
 * statements are, so a measured run starts after it rather than counting it per attempt.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** CPU (ms) under which a window of `WINDOW_MS` counts as quiet. */
const QUIET_CPU_MS = 2;
const WINDOW_MS = 100;
const GIVE_UP_MS = 5_000;

/** Resolves once a whole window passed with at most QUIET_CPU_MS of CPU, or after GIVE_UP_MS. */
export async function untilQuiet(): Promise<void> {
  const giveUpAt = performance.now() + GIVE_UP_MS;
  while (performance.now() < giveUpAt) {
    const before = process.cpuUsage();
    await sleep(WINDOW_MS);
    const spent = process.cpuUsage(before);
    if ((spent.user + spent.system) / 1000 <= QUIET_CPU_MS) return;
  }
}
