/**
 * Where a landing's time went, from the kit's own spans: an OpenTelemetry SDK registered in the app
 * process, as an integrator would, keeping finished spans in memory until the orchestrator takes
 * them. A landing is its span (from the request's arrival at the kit's route to its answer) and
 * the time in its two children: the status read and the fulfilment (the store's transaction and
 * its commit). The rest is the app's own work and waiting (for a store connection, the event loop).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { SpanName } from '../../../middleware/telemetry.ts';

/** One landing's time, ms; `startedAt` on the epoch clock every process shares. */
export interface LandingTime {
  startedAt: number;
  totalMs: number;
  statusReadMs: number;
  fulfilMs: number;
}

/** An OpenTelemetry time ([seconds, nanoseconds]) in ms. */
const ms = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6;
const msOf = (span: ReadableSpan) => ms(span.duration);

/** The landings among `spans`, each with its children's time. */
function landingTimes(spans: ReadableSpan[]): LandingTime[] {
  const childMs = new Map<string, { statusReadMs: number; fulfilMs: number }>();
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    if (parent === undefined) continue;
    const times = childMs.get(parent) ?? { statusReadMs: 0, fulfilMs: 0 };
    if (span.name === SpanName.ReadStatus) times.statusReadMs += msOf(span);
    if (span.name === SpanName.Fulfil) times.fulfilMs += msOf(span);
    childMs.set(parent, times);
  }
  return spans
    .filter((span) => span.name === SpanName.Landing)
    .map((span) => ({
      startedAt: ms(span.startTime),
      totalMs: msOf(span),
      ...(childMs.get(span.spanContext().spanId) ?? { statusReadMs: 0, fulfilMs: 0 }),
    }));
}

/** Registers the SDK; `take()` hands over the landings finished since the last call. */
export function recordLandingTimes(): { take(): LandingTime[] } {
  const exporter = new InMemorySpanExporter();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  return {
    take() {
      const spans = exporter.getFinishedSpans();
      exporter.reset();
      return landingTimes(spans);
    },
  };
}
