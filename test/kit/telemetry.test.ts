/**
 * What an operator sees through OpenTelemetry (in-memory exporters stand in for the app's SDK):
 * spans for start, create, status read, fulfil, the landing and each sweep run, nested in one
 * trace per request; metrics for starts, refused starts by budget and the sweep's lag; and no
 * attribute carrying the secret, a handoff, a phone number or a state.
 */
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricName, SpanName } from '../../middleware/telemetry.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { USERS } from '../support/users.ts';
import { newSeen } from '../support/seen.ts';

class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const spans = new InMemorySpanExporter();
const reader = new CollectingReader();
let app: TestApp;
const seen = newSeen();
/** The kit's default delay before the sweep first reads a new attempt's status (sweep.firstCheckAfterMs). */
const FIRST_CHECK_AFTER_MS = 3 * 60_000;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  app = await startTestApp({ kit: { limits: { perUser: { points: 3, durationSeconds: 600 } } } });
});
afterAll(async () => {
  await app?.close();
  trace.disable();
  metrics.disable();
  context.disable();
});

function named(name: string): ReadableSpan[] {
  return spans.getFinishedSpans().filter((span) => span.name === name);
}

function metricPoints(collected: ResourceMetrics, name: string) {
  const metric = collected.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []) as { attributes: Record<string, unknown>; value: unknown }[];
}

describe('OpenTelemetry', () => {
  let sessionId = '';

  it('a verified start and landing give start, create, landing, status read and fulfil spans, nested per request', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const handoff = await alice.start('grant_badge');
    sessionId = (await app.latestAttempt()).sessionId;
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: sessionId });
    expect((await alice.request(location)).status).toBe(303);

    const [start] = named(SpanName.Start);
    const [create] = named(SpanName.CreateSession);
    expect(start?.attributes).toMatchObject({ 'verify_kit.action': 'grant_badge', 'verify_kit.session_id': sessionId });
    expect(create?.attributes).toMatchObject({ 'verify_kit.session_id': sessionId, 'verify_kit.replayed': false });
    expect(create?.parentSpanContext?.spanId).toBe(start?.spanContext().spanId);

    const [landing] = named(SpanName.Landing);
    const read = named(SpanName.ReadStatus).find(
      (span) => span.parentSpanContext?.spanId === landing?.spanContext().spanId,
    );
    const fulfil = named(SpanName.Fulfil).find(
      (span) => span.parentSpanContext?.spanId === landing?.spanContext().spanId,
    );
    expect(landing?.attributes).toMatchObject({
      'verify_kit.outcome': 'fulfilled',
      'verify_kit.session_id': sessionId,
    });
    expect(read?.attributes).toMatchObject({ 'verify_kit.status': 'verified', 'verify_kit.session_id': sessionId });
    expect(fulfil?.attributes).toMatchObject({ 'verify_kit.result': 'fulfilled', 'verify_kit.action': 'grant_badge' });
  });

  it('a refused start is an error span with the code, and counted by the budget that refused it', async () => {
    const bob = await app.agent(seen).signIn('bob');
    for (let i = 0; i < 3; i++) await bob.start('grant_badge');
    expect((await bob.postStart({ _csrf: bob.csrf, action: 'grant_badge' })).status).toBe(429);
    const refused = named(SpanName.Start).at(-1);
    expect(refused?.attributes['verify_kit.error_code']).toBe('rate_limited');

    const { resourceMetrics } = await reader.collect();
    expect(metricPoints(resourceMetrics, MetricName.StartsRefused)).toEqual([
      expect.objectContaining({ attributes: { 'verify_kit.budget': 'user' }, value: 1 }),
    ]);
    const starts = metricPoints(resourceMetrics, MetricName.Starts);
    expect(starts).toEqual([
      expect.objectContaining({
        attributes: { 'verify_kit.action': 'grant_badge', 'verify_kit.platform': 'web' },
        value: 4,
      }),
    ]);
  });

  it('each sweep run is a span with its counts, and records how overdue its oldest due attempt was', async () => {
    // The sweep runs 90 s after the first status check of anything started so far fell due.
    const report = await app.clock.shifted(FIRST_CHECK_AFTER_MS + 90_000, () => app.kit.runSweep({ concurrency: 2 }));
    expect(report.claimed).toBeGreaterThan(0);
    expect(report.oldestDueAgeMs).toBeGreaterThanOrEqual(90_000);

    const sweep = named(SpanName.Sweep).at(-1);
    expect(sweep?.attributes).toMatchObject({
      'verify_kit.sweep.claimed': report.claimed,
      'verify_kit.sweep.pending': report.pending,
    });
    const { resourceMetrics } = await reader.collect();
    const [lag] = metricPoints(resourceMetrics, MetricName.SweepLag);
    expect(lag?.value).toBeGreaterThanOrEqual(90);
  });

  it('counts each outcome once when it is recorded, by source and reason (a reload counts nothing more)', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await alice.start('grant_badge');
    const failing = await app.latestAttempt();
    await app.emulator.control.complete(failing.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    await alice.landFor(failing.sessionId, failing.state);
    await alice.landFor(failing.sessionId, failing.state);
    // Started 25 hours ago by the kit's clock and never finished: the sweep expires it.
    await app.clock.shifted(-25 * 3_600_000, () => alice.start('grant_badge'));
    await app.kit.runSweep();

    const { resourceMetrics } = await reader.collect();
    const points = metricPoints(resourceMetrics, MetricName.Outcomes).map((p) => ({ ...p.attributes, count: p.value }));
    expect(points).toEqual(
      expect.arrayContaining([
        { 'verify_kit.outcome': 'fulfilled', 'verify_kit.source': 'landing', count: 1 },
        { 'verify_kit.outcome': 'failed', 'verify_kit.source': 'landing', 'verify_kit.reason': 'otp_locked', count: 1 },
        { 'verify_kit.outcome': 'expired', 'verify_kit.source': 'sweep', count: 1 },
      ]),
    );
  });

  it('a number the destination policy refuses is counted by reason, before any start is counted', async () => {
    USERS.pat = { userRef: 'user-pat', destination: '+19005550123' }; // premium-rate
    try {
      const pat = await app.agent(seen).signIn('pat');
      const startsNow = async () =>
        metricPoints((await reader.collect()).resourceMetrics, MetricName.Starts).map((p) => p.value);
      const before = await startsNow();
      expect((await pat.postStart({ _csrf: pat.csrf, action: 'grant_badge' })).status).toBe(422);
      const { resourceMetrics } = await reader.collect();
      expect(metricPoints(resourceMetrics, MetricName.DestinationsRefused)).toEqual([
        expect.objectContaining({ attributes: { 'verify_kit.reason': 'type', 'verify_kit.entered': false }, value: 1 }),
      ]);
      expect(await startsNow()).toEqual(before);
    } finally {
      // The next test still looks for this number everywhere.
      USERS.pat = { userRef: 'user-pat', destination: '+19005550123' };
    }
  });

  it('no span or metric attribute carries the secret, a handoff, a phone number or a state', async () => {
    const states = (await app.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER })).map((a) => a.state);
    const forbidden = [
      app.secret,
      ...seen.handoffs,
      ...states,
      ...Object.values(USERS).map((user) => user.destination),
    ];
    expect(forbidden.length).toBeGreaterThan(5);
    const { resourceMetrics } = await reader.collect();
    const values = [
      ...spans.getFinishedSpans().flatMap((span) => [span.name, ...Object.values(span.attributes).map(String)]),
      JSON.stringify(resourceMetrics.scopeMetrics),
    ];
    const leaks = values.filter((value) => forbidden.some((secret) => value.includes(secret)));
    expect(leaks).toEqual([]);
    expect(spans.getFinishedSpans().length).toBeGreaterThan(10);
    delete USERS.pat;
  });
});
