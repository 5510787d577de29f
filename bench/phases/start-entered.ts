/**
 * A start with a typed number (BENCH_ONLY=start-entered): POST /verify/start with the number in the
 * form's `phone` field, a different number each request (half national, half international), kit
 * against a hand-written handler that parses with the same library and metadata. Before it, what
 * loading the library costs, in fresh processes.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ENTERED_ACTION, typedNumberOf } from '../common.ts';
import { config } from '../config.ts';
import type { Child } from '../ipc.ts';
import type { LoadRequest } from '../load.ts';
import { log } from '../measure.ts';
import { resetEmulator } from '../seed.ts';
import { interleaved, type Comparison } from './interleaved.ts';
import { login, type Side } from './sides.ts';

/** One fresh process's import of libphonenumber-js/max and first parse + getType (bench/children/number-library-cost.mjs). */
export interface NumberLibraryRun {
  importMs: number;
  firstParseMs: number;
  type: string;
  rssBeforeMiB: number;
  rssGrowthImportMiB: number;
  rssGrowthMiB: number;
}

export interface NumberLibraryCost {
  /** The run with the median import time. */
  median: NumberLibraryRun;
  runs: NumberLibraryRun[];
}

const COST_RUNS = 5;

/** Imports the library in COST_RUNS fresh node processes, one after another. */
export async function numberLibraryCost(): Promise<NumberLibraryCost> {
  const script = fileURLToPath(new URL('../children/number-library-cost.mjs', import.meta.url));
  const runs: NumberLibraryRun[] = [];
  for (let i = 0; i < COST_RUNS; i++) {
    const { stdout } = await promisify(execFile)(process.execPath, [script]);
    runs.push(JSON.parse(stdout) as NumberLibraryRun);
  }
  const byImportTime = [...runs].sort((a, b) => a.importMs - b.importMs);
  return { median: byImportTime[Math.floor(runs.length / 2)]!, runs };
}

/** The printed line of the import cost. */
export function numberLibraryLine(cost: NumberLibraryCost): string {
  const m = cost.median;
  return (
    `  libphonenumber-js/max in a fresh node process (median of ${cost.runs.length} by import time): import ${m.importMs} ms, ` +
    `RSS +${m.rssGrowthImportMiB} MiB (from ${m.rssBeforeMiB} MiB); first parse + getType ${m.firstParseMs} ms (${m.type}), ` +
    `RSS +${m.rssGrowthMiB} MiB in all; import ms per run ${cost.runs.map((r) => r.importMs).join(', ')}`
  );
}

export async function startEnteredPhase(
  emulatorUrl: string,
  emulator: Child,
  sides: [Side, Side],
): Promise<Comparison> {
  await resetEmulator(emulatorUrl);
  const jars = new Map<string, { cookie: string; csrf: string }[]>();
  for (const side of sides) {
    const list = [];
    for (let w = 0; w < config.concurrency; w++) list.push(await login(side, `bench-typist-${side.name}-${w}`));
    jars.set(side.name, list);
  }
  const startRequest = (side: Side, worker: number, phone: string): LoadRequest => {
    const jar = jars.get(side.name)![worker]!;
    return {
      method: 'POST',
      path: '/verify/start',
      headers: { cookie: jar.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `action=${ENTERED_ACTION}&_csrf=${encodeURIComponent(jar.csrf)}&phone=${encodeURIComponent(phone)}`,
    };
  };
  for (const side of sides) await sanityCheck(side, emulatorUrl, (phone) => startRequest(side, 0, phone));
  log('start-entered: both sides text a typed number and refuse one that is not a number');
  return interleaved('start-entered', sides, emulator, 200, (side, i, worker) =>
    startRequest(side, worker, typedNumberOf(i)),
  );
}

/** Each side answers a typed number with the handoff page, and "12" with 422 (nothing sent). */
async function sanityCheck(side: Side, emulatorUrl: string, request: (phone: string) => LoadRequest): Promise<void> {
  const post = async (phone: string) => {
    const req = request(phone);
    const response = await fetch(`${side.origin}${req.path}`, {
      method: 'POST',
      headers: req.headers,
      body: req.body ?? null,
      redirect: 'manual',
    });
    return { status: response.status, text: await response.text() };
  };
  const texted = await post(typedNumberOf(0));
  const refused = await post('12');
  if (texted.status !== 200 || !texted.text.includes(`${emulatorUrl}/verify`) || !texted.text.includes('name="hx"'))
    throw new Error(`start-entered sanity check failed for ${side.name}: a typed number answered ${texted.status}`);
  if (refused.status !== 422)
    throw new Error(`start-entered sanity check failed for ${side.name}: "12" answered ${refused.status}, not 422`);
}
