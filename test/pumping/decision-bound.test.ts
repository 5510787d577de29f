/**
 * What SMS pumping decisions write is bounded per instance, on SQLite and PostgreSQL: a refusal
 * spends no text, so a burst of refused starts (or of warned ones in record mode) stores and logs
 * at most PUMPING_DECISIONS_RECORDED_PER_MINUTE decisions a minute, while every refusal is still
 * counted under its keys (the rules' "held" reads it) and by the OpenTelemetry decision counter,
 * and answered exactly as before: the same 429 and Retry-After, nothing sent, no budget spent.
 * The next minute's first start logs how many were left unwritten, and decisions are written again.
 */
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingOptions } from '../../middleware/index.ts';
import { PUMPING_DECISIONS_RECORDED_PER_MINUTE as BOUND } from '../../middleware/pumping/pumping-guard.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { MetricName } from '../../middleware/telemetry.ts';
import { describeEachAppStore, type StoreOptions } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}
const reader = new CollectingReader();

const HOUR = 3_600_000;
const MINUTE = 60_000;
/** Ten minutes into an hour, so the minute after stays in the same hour's counts. */
const BASE = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * MINUTE;
const BURST = 500;
/** Nigerian mobiles, each in a block of its own: four never verified trip the country's hourly rule. */
const TRIP = ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001'];
/** The number the burst texts: a block of its own, so only the country's rule refuses it. */
const TARGET = '+2348036000001';

const lines: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
  lines.push({ level, obj, msg });
};
const logger = { info: at('info'), warn: at('warn'), error: at('error') };
const decisionLines = (decision: string) => lines.filter((l) => l.obj.pumping === decision).length;
const summaries = () => lines.filter((l) => l.obj.pumping === 'unrecorded');

/** The OpenTelemetry decision counter's total for one decision and reason. */
async function counted(decision: string, reason: string): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((m) => m.descriptor.name === MetricName.PumpingDecisions);
  const points = (metric?.dataPoints ?? []) as { attributes: Record<string, unknown>; value: unknown }[];
  return points
    .filter((p) => p.attributes['verify_kit.decision'] === decision && p.attributes['verify_kit.reason'] === reason)
    .reduce((sum, p) => sum + Number(p.value), 0);
}

beforeAll(() => {
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(() => {
  metrics.disable();
});

async function appWith(storeOptions: StoreOptions, pumping: PumpingOptions): Promise<TestApp> {
  return startTestApp({
    ...(await storeOptions()),
    kit: {
      actions: [addPhoneAction()],
      // Every agent is 127.0.0.1: the address rules out of the way.
      pumping: { ...pumping, thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } } },
      limits: { ...GENEROUS_START_LIMITS, perUser: { points: 1, durationSeconds: 3600 } },
      logger,
    },
  });
}

async function tripNigeria(app: TestApp): Promise<void> {
  for (const phone of TRIP) {
    const user = await app.agent().signIn(`someone-${phone}-${Math.random()}`);
    expect((await user.tryStartWithNumber('add_phone', phone)).status).toBe(200);
  }
}

/** The country's refusals this hour, as the rules read them. */
async function nigeriaRefused(app: TestApp, now: number): Promise<number> {
  const start = startKeys(TARGET, '127.0.0.1', 'nobody');
  const reading = await app.store.pumping!.readPumping({
    keys: start.keys,
    address: start.address,
    hour: Math.floor(now / HOUR),
    now,
  });
  return reading.counts[0]!.refusedThisHour;
}

const texts = async (app: TestApp) => (await app.emulator.control.stats()).smsSent;
const stored = async (app: TestApp, since: number) =>
  (await app.store.pumping!.listDecisions({ since, limit: 10 * BURST })).length;

/** `count` calls of `run`, `width` at a time: their results in order. */
async function inWaves<T>(count: number, width: number, run: (n: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let n = 0; n < count; n += width) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(width, count - n) }, (_, i) => run(n + i)))));
  }
  return results;
}

describeEachAppStore('a burst of SMS pumping decisions', (_store, storeOptions) => {
  const apps: TestApp[] = [];
  let refusing: TestApp;
  let recording: TestApp;
  beforeAll(async () => {
    refusing = await appWith(storeOptions, { mode: 'refuse' });
    recording = await appWith(storeOptions, { mode: 'record' });
    apps.push(refusing, recording);
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it(`${BURST} refused starts in a minute store and log ${BOUND} decisions, count all ${BURST}, and answer each the same`, async () => {
    const app = refusing;
    // One user posts the whole burst: a refusal spends no budget, and it has one start an hour.
    const attacker = await app.clock.pinned(BASE, async () => {
      await tripNigeria(app);
      return app.agent().signIn('attacker');
    });
    const [rows, logged, sent] = [await stored(app, BASE), decisionLines('refused'), await texts(app)];
    const [refused, telemetry] = [await nigeriaRefused(app, BASE), await counted('refused', 'country_hourly')];
    expect(rows).toBe(0);
    const before = summaries().length;

    const answers = await app.clock.pinned(BASE + 1000, () =>
      inWaves(BURST, 20, async () => {
        const answer = await attacker.tryStartWithNumber('add_phone', TARGET);
        // The page's CSP nonce is fresh each time; the rest is the answer.
        const body = answer.body.replace(/nonce="[^"]*"/g, 'nonce');
        return { status: answer.status, retryAfter: answer.headers.get('retry-after'), body };
      }),
    );
    // Each refusal answered as before, the last (unwritten) as the first (written).
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toMatchObject({ status: 429, retryAfter: '3600', body: expect.stringContaining('Too many') });
    expect(await texts(app)).toBe(sent);

    expect(await stored(app, BASE)).toBe(BOUND);
    expect(decisionLines('refused') - logged).toBe(BOUND);
    // Every refusal counted: under the country's key (the rules read it) and by the counter.
    expect((await nigeriaRefused(app, BASE + 1000)) - refused).toBe(BURST);
    expect((await counted('refused', 'country_hourly')) - telemetry).toBe(BURST);
    expect(summaries()).toHaveLength(before);

    // The next minute: its first start says what the last one left unwritten, and decisions are written again.
    await app.clock.pinned(BASE + 1000 + MINUTE, async () => {
      const answer = await attacker.tryStartWithNumber('add_phone', TARGET);
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('3600');
      expect(await stored(app, BASE)).toBe(BOUND + 1);
      expect(decisionLines('refused') - logged).toBe(BOUND + 1);
      expect(
        summaries()
          .slice(before)
          .map((l) => l.obj.unrecorded),
      ).toEqual([{ refused: BURST - BOUND, warned: 0, challenged: 0 }]);
      expect(summaries()[before]!.msg).toMatch(
        new RegExp(`^${BURST - BOUND} SMS pumping decisions .* not stored or logged`),
      );
      // No budget spent by any of them: the attacker's one start of the hour goes to a country with room.
      expect((await attacker.tryStartWithNumber('add_phone', '+33612345678')).status).toBe(200);
    });
    expect(await texts(app)).toBe(sent + 1);
  });

  it(`warned starts (record mode) store and log ${BOUND} decisions a minute, and are all sent and counted`, async () => {
    const app = recording;
    const WARNED = BOUND + 15;
    await app.clock.pinned(BASE, () => tripNigeria(app));
    const [logged, sent, telemetry] = [
      decisionLines('warned'),
      await texts(app),
      await counted('warned', 'country_hourly'),
    ];
    const before = summaries().length;
    const statuses = await app.clock.pinned(BASE + 1000, () =>
      inWaves(WARNED, 15, async (n) => {
        const user = await app.agent().signIn(`warned-${n}`);
        return (await user.tryStartWithNumber('add_phone', TARGET)).status;
      }),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await texts(app)).toBe(sent + WARNED);
    expect(await stored(app, BASE)).toBe(BOUND);
    expect(decisionLines('warned') - logged).toBe(BOUND);
    expect((await counted('warned', 'country_hourly')) - telemetry).toBe(WARNED);

    await app.clock.pinned(BASE + 1000 + MINUTE, async () => {
      const user = await app.agent().signIn('warned-next-minute');
      expect((await user.tryStartWithNumber('add_phone', TARGET)).status).toBe(200);
    });
    expect(await stored(app, BASE)).toBe(BOUND + 1);
    expect(
      summaries()
        .slice(before)
        .map((l) => l.obj.unrecorded),
    ).toEqual([{ refused: 0, warned: WARNED - BOUND, challenged: 0 }]);
  });
});
