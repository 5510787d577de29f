/**
 * The OpenTelemetry providers are the app's code, outside the kit's trust: a meter whose
 * instruments throw and a span processor that throws on every span's start and end never fail a
 * request that had its effect (the start sent its SMS, the landing ran its action) nor a sweep run;
 * nor does a tracer provider that cannot give a tracer, nor a context manager that throws, drops
 * the result of what it runs, or runs it twice.
 */
import {
  context,
  metrics,
  trace,
  type ContextManager,
  type Counter,
  type Gauge,
  type Meter,
  type MeterProvider,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracerProvider } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

/** The kit's default delay before the sweep first reads a new attempt's status (sweep.firstCheckAfterMs). */
const FIRST_CHECK_AFTER_MS = 3 * 60_000;

const broken = (): never => {
  throw new Error('telemetry exporter down');
};
const throwingCounter = { add: broken } as unknown as Counter;
const throwingGauge = { record: broken } as unknown as Gauge;
const throwingMeter = {
  createCounter: () => throwingCounter,
  createGauge: () => throwingGauge,
} as unknown as Meter;
const throwingMeterProvider: MeterProvider = { getMeter: () => throwingMeter };
/**
 * What fails: the span processor as each span starts, or as it ends (an exporter failing), the
 * tracer provider, or the context manager (throwing, forgetting to return what it ran, running it twice).
 */
type Failing = 'onStart' | 'onEnd' | 'tracer' | 'context' | 'context drops the result' | 'context runs it twice';
let failingAt: Failing = 'onStart';
const throwingProcessor: SpanProcessor = {
  onStart: () => failingAt === 'onStart' && broken(),
  onEnd: () => failingAt === 'onEnd' && broken(),
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
const als = new AsyncLocalStorageContextManager();
const throwingContextManager: ContextManager = {
  active: () => (failingAt === 'context' ? broken() : als.active()),
  with: (ctx, fn, thisArg, ...args) => {
    if (failingAt === 'context') broken();
    const result = als.with(ctx, fn, thisArg, ...args);
    if (failingAt === 'context runs it twice') return als.with(ctx, fn, thisArg, ...args);
    return failingAt === 'context drops the result' ? (undefined as never) : result;
  },
  bind: (ctx, target) => als.bind(ctx, target),
  enable() {
    als.enable();
    return this;
  },
  disable() {
    als.disable();
    return this;
  },
};

const tracing = new BasicTracerProvider({ spanProcessors: [throwingProcessor] });
const throwingTracerProvider: TracerProvider = {
  getTracer: (...args) => (failingAt === 'tracer' ? broken() : tracing.getTracer(...args)),
};

let app: TestApp;

beforeAll(async () => {
  context.setGlobalContextManager(throwingContextManager.enable());
  trace.setGlobalTracerProvider(throwingTracerProvider);
  metrics.setGlobalMeterProvider(throwingMeterProvider);
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
  trace.disable();
  metrics.disable();
  context.disable();
});

const failures: Failing[] = [
  'onStart',
  'onEnd',
  'tracer',
  'context',
  'context drops the result',
  'context runs it twice',
];

describe.each(failures)('a throwing meter, and failing: %s', (where) => {
  beforeAll(() => {
    failingAt = where;
  });

  it('a start answers its handoff page and the landing its 303, and the action runs once', async () => {
    const alice = await app.agent().signIn('alice');
    const handoff = await alice.start('grant_badge');
    const { sessionId } = await app.latestAttempt();
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId });
    expect((await alice.request(location)).status).toBe(303);
    expect(app.grants(sessionId)).toBe(1);
    expect((await app.attempt(sessionId))?.outcome).toBe('fulfilled');
  });

  it('a sweep run fulfils and expires what it finds, and reports no error', async () => {
    const bob = await app.agent().signIn('bob');
    const handoff = await bob.start('grant_badge');
    const verified = await app.latestAttempt();
    await bob.verifyOnHostedPage({ ...handoff, sessionId: verified.sessionId });
    // Started 25 hours ago by the kit's clock and never finished: the sweep expires it.
    await app.clock.shifted(-25 * 3_600_000, () => bob.start('grant_badge'));
    const report = await app.clock.shifted(FIRST_CHECK_AFTER_MS + 1_000, () => app.kit.runSweep());
    expect(report).toMatchObject({ fulfilled: 1, expired: 1, errors: 0 });
    expect(app.grants(verified.sessionId)).toBe(1);
  });
});
