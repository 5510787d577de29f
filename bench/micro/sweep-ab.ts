/**
 * Interleaved A/B of the SQLite sweep (measurement tool, not part of `npm run bench`): seeds N
 * verified sessions and due attempts once, then runs ONE runSweep per round in a fresh process on a
 * fresh copy of the seeded file, alternating two kit versions (ABBA), with the emulator's raw
 * capacity measured between rounds. Figures per run: attempts/s, fraction of the nearest raw
 * capacity, sweep CPU per attempt, peak RSS.
 *
 *   SWEEP_AB_OLD=/tmp/old (a dir holding bench/ and middleware/ of the other version, node_modules linked)
 *   SWEEP_AB_SIZES=10000,100000 SWEEP_AB_ROUNDS=4 npx tsx bench/micro/sweep-ab.ts
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnChild } from '../ipc.ts';
import { median } from '../load.ts';
import { seedVerifiedSessions, writeDueAttempts, type SeedClient } from '../seed.ts';
import type { RawResult, SweepChildResult } from '../children/sweep-child.ts';

const sizes = (process.env.SWEEP_AB_SIZES ?? '10000').split(',').map(Number);
const rounds = Number(process.env.SWEEP_AB_ROUNDS ?? 4);
const oldDir = process.env.SWEEP_AB_OLD;
const variants: { name: string; script: string }[] = [
  { name: 'new', script: './children/sweep-child.ts' },
  ...(oldDir === undefined ? [] : [{ name: 'old', script: pathToFileURL(oldSweepChild(oldDir)).href }]),
];

/** The other version's sweep child: in bench/children/, or in bench/ itself in a version without the folders. */
function oldSweepChild(root: string): string {
  const inFolder = `${root}/bench/children/sweep-child.ts`;
  return existsSync(inFolder) ? inFolder : `${root}/bench/sweep-child.ts`;
}

const load = () => loadavg()[0]!.toFixed(1);
const dir = mkdtempSync(join(tmpdir(), 'sweep-ab-'));
const client: SeedClient = {
  clientId: 'bench-sweep',
  secret: `ab-${randomBytes(24).toString('base64url')}`,
  returnUrl: 'http://localhost:9/verify/return',
};
const emulator = spawnChild('./children/emulator-child.ts', 'emulator');
try {
  const { url: emulatorUrl } = await emulator.call<{ url: string }>('start', { clients: [client] }, 60_000);
  for (const size of sizes) {
    const template = join(dir, `seed-${size}.sqlite`);
    const sessions = await seedVerifiedSessions(emulatorUrl, client, size, (i) => `ab-${size}-${i}`, {
      concurrency: 16,
    });
    await writeDueAttempts(template, sessions);
    const common = { emulatorUrl, clientId: client.clientId, secret: client.secret };
    const raw = async () => {
      const child = spawnChild('./children/sweep-child.ts', 'raw');
      try {
        const args = { ...common, dbPath: template, concurrency: 4, total: Math.min(size, 20_000), maxMs: 20_000 };
        return await child.call<RawResult>('raw', args);
      } finally {
        await child.stop();
      }
    };
    const results = new Map<string, { fraction: number; rate: number; cpu: number; rss: number }[]>();
    let rawBefore = (await raw()).rps;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) {
        const dbPath = join(dir, `run-${size}.sqlite`);
        copyFileSync(template, dbPath);
        const child = spawnChild(v.script, 'sweep');
        let r: SweepChildResult;
        try {
          r = await child.call<SweepChildResult>('sweep', { ...common, dbPath, timeBudgetMs: 600_000 }, 900_000);
        } finally {
          await child.stop();
        }
        for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) rmSync(f, { force: true });
        const rawAfter = (await raw()).rps;
        const rate = r.report.fulfilled / (r.runMs / 1000);
        const fraction = rate / ((rawBefore + rawAfter) / 2);
        const cpu = (r.cpuUserMs + r.cpuSystemMs) / Math.max(1, r.report.reads);
        const rss = r.peakRssKiB / 1024;
        const list = results.get(v.name) ?? [];
        list.push({ fraction, rate, cpu, rss });
        results.set(v.name, list);
        const ok = r.grants === size && r.report.fulfilled === size ? 'once' : `GRANTS ${r.grants}`;
        console.log(
          `${size} ${v.name} round ${round}: ${fraction.toFixed(3)} (${rate.toFixed(0)}/s, raw ${rawBefore.toFixed(0)}/${rawAfter.toFixed(0)}) ` +
            `cpu ${cpu.toFixed(3)} ms/att, run ${r.runMs.toFixed(0)} ms, peak RSS ${rss.toFixed(1)} MiB ` +
            `(before run ${(r.rssBeforeKiB / 1024).toFixed(1)}), ${ok}, load ${load()}` +
            (r.memoryAtPeak === undefined ? '' : `, at peak ${JSON.stringify(r.memoryAtPeak)}`),
        );
        rawBefore = rawAfter;
      }
    }
    for (const [name, list] of results) {
      const stat = (k: 'fraction' | 'rate' | 'cpu' | 'rss') => {
        const xs = list.map((x) => x[k]);
        return `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)}, ${Math.max(...xs).toFixed(3)})`;
      };
      console.log(
        `SUMMARY ${size} ${name}: fraction ${stat('fraction')}, rate ${stat('rate')}, cpu ms/att ${stat('cpu')}, peak RSS ${stat('rss')}`,
      );
    }
  }
} finally {
  await emulator.stop();
  rmSync(dir, { recursive: true, force: true });
}
