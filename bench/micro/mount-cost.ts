/**
 * Diagnostic (not part of npm run bench): app-process CPU per request of the same trivial handler
 * on the app, in a mounted express() sub-app (as kit.router is), in an express.Router(), and of a
 * host-app route declared after a mounted sub-app. Interleaved rounds; CPU from process.cpuUsage().
 *
 *   npx tsx bench/micro/mount-cost.ts
 */
import { spawnChild } from '../ipc.ts';
import { closedLoop, loadPool, percentile, sortedCopy } from '../load.ts';

const rounds = Number(process.env.ROUNDS ?? 6);
const perRound = Number(process.env.PER_ROUND ?? 3000);
const child = spawnChild('./children/mount-child.ts', 'mount');
try {
  const ports = await child.call<Record<string, number>>('ports', undefined, 60_000);
  const variants: [string, string][] = [
    ['direct', '/verify/return'],
    ['subapp', '/verify/return'],
    ['router', '/verify/return'],
    ['behindSubapp', '/own'],
  ];
  const totals = new Map(variants.map(([v]) => [v, { cpu: 0, n: 0, lat: [] as number[] }]));
  for (let r = 0; r < rounds + 1; r++) {
    const order = r % 2 === 0 ? variants : [...variants].reverse();
    for (const [name, path] of order) {
      const pool = loadPool(`http://127.0.0.1:${ports[name]}`, 8);
      const c0 = await child.call<{ user: number; system: number }>('cpu');
      const result = await closedLoop({
        pool,
        concurrency: 8,
        total: perRound,
        maxMs: 30_000,
        expectStatus: 303,
        request: () => ({ method: 'GET', path }),
      });
      const c1 = await child.call<{ user: number; system: number }>('cpu');
      await pool.close();
      if (r === 0) continue; // warm-up
      const t = totals.get(name)!;
      t.cpu += (c1.user - c0.user + c1.system - c0.system) / 1000;
      t.n += result.ok;
      t.lat.push(...result.latenciesMs);
    }
  }
  const base = totals.get('direct')!;
  for (const [name, t] of totals) {
    const s = sortedCopy(t.lat);
    console.log(
      `${name.padEnd(13)} app CPU ${((t.cpu / t.n) * 1000).toFixed(1).padStart(6)} µs/req (x${(t.cpu / t.n / (base.cpu / base.n)).toFixed(3)})  p50 ${percentile(s, 50).toFixed(2)} ms  p99 ${percentile(s, 99).toFixed(2)} ms`,
    );
  }
} finally {
  await child.stop();
}
