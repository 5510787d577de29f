/**
 * A simulated day on a clock that moves only when told (day-clock.ts). Starts are spread over
 * 24 h, each in one outcome class (day-model.ts): returns and lands; verifies and never returns;
 * fails; abandons. The sweep runs as its worker does (a pause of 60 s, the documented interval,
 * after each run) against an in-process emulator, behind a status-read limit counted on the day's
 * clock (day-read-limit.ts), until every attempt's 24 h window has closed. The same traffic runs
 * through the default read schedule and through the previous one (`backoffMs`: 30 s, 1, 2, 5, 10,
 * then 30 min: the baseline); a naive integration (a cron reading every pending attempt each
 * minute) is counted over the same traffic.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TestClock } from '../../emulator/clock.ts';
import { startEmulator, type RunningEmulator } from '../../emulator/index.ts';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { completeAttempt } from '../../middleware/fulfil/fulfil.ts';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { SWEEP_WINDOW_MS } from '../../middleware/sweep/sweep-options.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { ActionDefinition, VerifyClient } from '../../middleware/types.ts';
import { config } from '../config.ts';
import { log, round1, round2 } from '../measure.ts';
import { createStillClock } from './day-clock.ts';
import { dayReadLimit, type DayReadLimit } from './day-read-limit.ts';
import {
  BASELINE_BACKOFF_MS,
  classFigures,
  DAY_MS,
  dayModel,
  FIRST_CHECK_AFTER_MS,
  MINUTE_MS,
  naiveFigures,
  peakOf,
  SWEEP_INTERVAL_MS,
  type DayFigures,
  type ModelAttempt,
  type ScheduleFigures,
} from './day-model.ts';

export type { DayFigures } from './day-model.ts';

type Event = { at: number; index: number; kind: 'start' | 'verify' | 'fail' | 'land' };

const RETURN_URL = 'http://localhost:9/verify/return';

/** One schedule's day: the emulator, the store, and what was counted per attempt (by model index). */
interface Day {
  clock: TestClock;
  emulator: RunningEmulator;
  store: SqliteStore;
  client: VerifyClient;
  deps: SweepDeps<unknown>;
  dir: string;
  index: Map<string, number>;
  sessionOf: string[];
  stateOf: string[];
  startedAt: number[];
  verifiedAt: number[];
  fulfilledAt: (number | undefined)[];
  fulfilments: number[];
  sweepReads: number[];
  perMinute: Map<number, number>;
  outsideWindow: number;
  /** Sweep runs that stopped on their time budget (real time). */
  runsStopped: number;
  /** The service's read limit, on the day's clock. */
  readLimit: DayReadLimit;
  reading: 'sweep' | 'landing';
}

async function openDay(model: ModelAttempt[]): Promise<Day> {
  const clock = createStillClock();
  const clientId = 'bench-day';
  // Random per run; never printed or written.
  const secret = `bench-${randomBytes(24).toString('base64url')}`;
  const emulator = await startEmulator({
    port: 0,
    clients: [{ clientId, secret, returnUrl: RETURN_URL }],
    clock,
    log: () => {},
  });
  const dir = mkdtempSync(join(tmpdir(), 'verify-kit-day-'));
  const client = createVerifyClient({ baseUrl: emulator.url, clientId, clientSecret: secret });
  const zeros = () => model.map(() => 0);
  const day: Day = {
    ...{ clock, emulator, client, dir, store: createSqliteStore({ database: join(dir, 'day.sqlite') }) },
    deps: undefined as never,
    index: new Map(),
    ...{ sessionOf: [], stateOf: [], startedAt: zeros(), verifiedAt: zeros(), fulfilments: zeros() },
    ...{
      fulfilledAt: model.map(() => undefined),
      sweepReads: zeros(),
      perMinute: new Map(),
      outsideWindow: 0,
      runsStopped: 0,
      readLimit: dayReadLimit(clock, config.rateLimit),
    },
    reading: 'sweep',
  };
  const action: ActionDefinition<unknown> = {
    name: 'day_grant',
    operationSensitivity: 'normal',
    successPath: '/done',
    fulfil: (_tx, attempt) => {
      const i = day.index.get(attempt.sessionId)!;
      day.fulfilments[i]!++;
      day.fulfilledAt[i] = clock.now();
    },
  };
  day.deps = {
    client: countingClient(day),
    store: day.store,
    actions: new Map([[action.name, action]]),
    now: clock.now,
  };
  return day;
}

/**
 * The client the kit reads through: counts each read by attempt, by minute, and outside the 24 h
 * window, and answers 429 beyond the read limit.
 */
function countingClient(day: Day): VerifyClient {
  return {
    ...day.client,
    getSession: async (sessionId) => {
      const i = day.index.get(sessionId)!;
      const now = day.clock.now();
      const age = now - day.startedAt[i]!;
      if (age < 0 || age >= SWEEP_WINDOW_MS) day.outsideWindow++;
      if (day.reading === 'sweep') day.sweepReads[i]!++;
      const minute = Math.floor(now / MINUTE_MS);
      day.perMinute.set(minute, (day.perMinute.get(minute) ?? 0) + 1);
      day.readLimit.take();
      return day.client.getSession(sessionId);
    },
  };
}

/** A start at its time on the clock: a real session, and its attempt as the start route writes it. */
async function start(day: Day, i: number): Promise<void> {
  const state = randomBytes(16).toString('base64url');
  const destination = `+1555${String(1_000_000 + i).slice(-7)}`;
  const input = { returnUrl: RETURN_URL, destination, userRef: `user-${i}`, state, platform: 'web' as const };
  const session = await day.client.createSession({ ...input, operationSensitivity: 'normal' }, `day-${state}`);
  const createdAt = day.clock.now();
  const [action] = day.deps.actions.keys();
  await day.store.insertAttempt({
    ...input,
    ...{ sessionId: session.sessionId, action: action!, params: {}, returnTo: '/done', sensitivity: 'normal' },
    ...{ createdAt, nextCheckAt: createdAt + FIRST_CHECK_AFTER_MS },
  });
  day.index.set(session.sessionId, i);
  day.startedAt[i] = createdAt;
  day.stateOf[i] = state;
  day.sessionOf[i] = session.sessionId;
}

async function apply(day: Day, event: Event): Promise<void> {
  const i = event.index;
  if (event.kind === 'start') return start(day, i);
  if (event.kind === 'verify') {
    await day.emulator.control.completeSession(day.sessionOf[i]!, 'verified');
    day.verifiedAt[i] = day.clock.now();
    return;
  }
  if (event.kind === 'fail') return day.emulator.control.completeSession(day.sessionOf[i]!, 'failed', 'otp_locked');
  // The landing's own re-read and the one fulfil path (a read it loses to the limit leaves the attempt to the sweep).
  day.reading = 'landing';
  const attempt = await day.store.findAttemptByState(day.stateOf[i]!);
  await completeAttempt(day.deps, attempt!, 'landing').catch(() => undefined);
  day.reading = 'sweep';
}

function eventsOf(model: ModelAttempt[], dayStart: number): Event[] {
  const events = model.flatMap((m, index): Event[] => {
    const at = dayStart + m.startAt;
    const out: Event[] = [{ at, index, kind: 'start' }];
    const outcome = m.cls === 'fails' ? 'fail' : 'verify';
    if (m.outcomeAfterMs !== undefined) out.push({ at: at + m.outcomeAfterMs, index, kind: outcome });
    if (m.landsAfterMs !== undefined) out.push({ at: at + m.landsAfterMs, index, kind: 'land' });
    return out;
  });
  // In time order; at equal times a start before what its user does.
  return events.sort((a, b) => a.at - b.at || Number(b.kind === 'start') - Number(a.kind === 'start'));
}

/** One schedule through the day: real sessions, a real SQLite store, the kit's sweep and landing path. */
async function simulate(model: ModelAttempt[], backoffMs: readonly number[] | undefined): Promise<ScheduleFigures> {
  const began = performance.now();
  const day = await openDay(model);
  try {
    const moveTo = (at: number) => {
      const ahead = at - day.clock.now();
      if (ahead > 0) day.clock.advance({ seconds: ahead / 1000 });
    };
    const dayStart = day.clock.now() + MINUTE_MS;
    const events = eventsOf(model, dayStart);
    let next = 0;
    let nextRun = dayStart;
    while (nextRun <= dayStart + DAY_MS + SWEEP_WINDOW_MS + 2 * SWEEP_INTERVAL_MS) {
      for (; next < events.length && events[next]!.at <= nextRun; next++) {
        moveTo(events[next]!.at);
        await apply(day, events[next]!);
      }
      moveTo(nextRun);
      const report = await runSweep(day.deps, backoffMs === undefined ? {} : { backoffMs });
      if (report.stoppedBy !== null) day.runsStopped++;
      // The run took no time on the day's clock: the worker's pause follows at once.
      nextRun = day.clock.now() + SWEEP_INTERVAL_MS;
    }
    return await figuresOf(day, model, began);
  } finally {
    await day.client.close();
    await day.store.close();
    await day.emulator.close();
    rmSync(day.dir, { recursive: true, force: true });
  }
}

async function figuresOf(day: Day, model: ModelAttempt[], began: number): Promise<ScheduleFigures> {
  const delays = model.map((m, i) =>
    m.cls === 'verifiedNeverReturns' && day.fulfilledAt[i] !== undefined
      ? day.fulfilledAt[i]! - day.verifiedAt[i]!
      : undefined,
  );
  const verifies = (m: ModelAttempt) => m.cls === 'lands' || m.cls === 'verifiedNeverReturns';
  return {
    classes: classFigures(model, day.sweepReads, delays),
    ...peakOf(day.perMinute, model.length),
    readsOutsideWindow: day.outsideWindow,
    wronglyFulfilled: model.filter((m, i) => day.fulfilments[i] !== (verifies(m) ? 1 : 0)).length,
    rateLimited: day.readLimit.refused,
    runsStopped: day.runsStopped,
    wallSeconds: round1((performance.now() - began) / 1000),
  };
}

export async function dayPhase(): Promise<DayFigures> {
  const { dayStarts: starts, daySeed: seed } = config;
  const model = dayModel(starts, seed);
  log(`day: ${starts} starts over a simulated day (seed ${seed}), the default schedule then the baseline`);
  const kit = await simulate(model, undefined);
  log(`day: default schedule done in ${kit.wallSeconds} s`);
  const baseline = await simulate(model, BASELINE_BACKOFF_MS);
  log(`day: baseline schedule done in ${baseline.wallSeconds} s`);
  return {
    ...{ starts, seed, readLimitPerSecond: config.rateLimit, sweepIntervalMs: SWEEP_INTERVAL_MS },
    ...{ kit, baseline, naive: naiveFigures(model), loadAverage: loadavg().map(round2) },
  };
}
