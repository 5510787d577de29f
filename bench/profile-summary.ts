/**
 * Summarises V8 .cpuprofile files (from BENCH_CPU_PROF_DIR=dir npm run bench): self time by
 * function and by source area (kit, emulator, express, undici, sqlite, node internals, ...).
 *
 *   npx tsx bench/profile-summary.ts dir/CPU.*.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function area(url: string, fn: string): string {
  if (url.includes('/middleware/')) return 'kit (middleware/)';
  if (url.includes('/emulator/')) return 'emulator';
  if (url.includes('/bench/')) return 'bench harness';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)' || fn === '(program)') return fn;
  return url === '' ? `native ${fn}` : url;
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
const files = args.filter((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1));
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  let total = 0;
  let idle = 0;
  const byArea = new Map<string, number>();
  const byFn = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    const a = area(url, functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|middleware|demo-app|bench)\//, '$1/')}:${lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const busy = total - idle;
  console.log(`\n${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy`);
  console.log('  self time by area (% of busy):');
  for (const [a, us] of [...byArea].sort((x, y) => y[1] - x[1]).slice(0, 20))
    console.log(`    ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${a}`);
  // Inclusive (self + callees) time of the kit's functions: what each costs with what it calls.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame;
      if (!url.includes('/middleware/') && !url.includes('/bench/children/app')) continue;
      const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(middleware|bench)\//, '$1/')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  if (inclusive.size > 0) {
    console.log('  kit (and baseline app) functions by inclusive time (ms, % of busy):');
    for (const [f, us] of [...inclusive].sort((x, y) => y[1] - x[1]).slice(0, top)) {
      console.log(`    ${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${f}`);
    }
  }
  console.log(`  top ${top} functions by self time:`);
  for (const [f, us] of [...byFn].sort((x, y) => y[1] - x[1]).slice(0, top))
    console.log(`    ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${f}`);
}
