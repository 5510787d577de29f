/**
 * What an operator can see, through `@opentelemetry/api` only: a no-op until the app registers an
 * OpenTelemetry SDK. Attributes carry identifiers and outcomes, never the client secret, a handoff,
 * a phone number or a `state` (the landing's key to an attempt).
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  metrics,
  ProxyTracerProvider,
  SpanStatusCode,
  trace,
  type Attributes,
  type Counter,
  type Gauge,
  type MeterProvider,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { KitError, redactSecretFragments } from './errors.ts';
import { mayBePhoneNumber } from './numbers/mask-number.ts';

/** The instrumentation scope every span and metric is reported under. */
export const TELEMETRY_SCOPE = 'hosted-sms-verify-kit';

/** Span names, one per unit of work. */
export const SpanName = {
  Start: 'verify_kit.start',
  Landing: 'verify_kit.landing',
  MobileComplete: 'verify_kit.mobile_complete',
  CreateSession: 'verify_kit.create_session',
  ReadStatus: 'verify_kit.read_status',
  Fulfil: 'verify_kit.fulfil',
  Sweep: 'verify_kit.sweep',
} as const;

/** Metric names. */
export const MetricName = {
  /** Verifications started (a session created, an SMS sent). */
  Starts: 'verify_kit.starts',
  /** Starts refused by a limit, by `verify_kit.budget` (user, destination, ip, user_numbers). */
  StartsRefused: 'verify_kit.starts.refused',
  /**
   * Outcomes as first recorded, by `verify_kit.outcome`, `verify_kit.source` and, for failures,
   * `verify_kit.reason`.
   */
  Outcomes: 'verify_kit.outcomes',
  /** Age in seconds of the oldest due attempt a sweep run found (0 when none was due). */
  SweepLag: 'verify_kit.sweep.lag',
  /**
   * Step-up guard decisions, by `verify_kit.step_up` (required, granted, consumed, denied, expired),
   * `verify_kit.scope` and `verify_kit.route` (the Express route the guard is mounted on, e.g.
   * `/accounts/:account/payee`: its pattern, never the requested path).
   */
  StepUp: 'verify_kit.step_up',
  /**
   * Numbers the destination policy refused before any text, by `verify_kit.reason` (country,
   * unknown_country, no_country, type) and `verify_kit.entered` (true for a typed number). Never the number.
   */
  DestinationsRefused: 'verify_kit.destinations.refused',
  /**
   * Starts that tripped an SMS pumping rule, by `verify_kit.decision` (warned, refused, challenged),
   * `verify_kit.reason` (one per rule tripped: country_hourly, block_daily, address_countries,
   * blocked, ...) and `verify_kit.country` (the number's country code). Never the number.
   */
  PumpingDecisions: 'verify_kit.pumping.decisions',
} as const;

interface Instruments {
  starts: Counter;
  startsRefused: Counter;
  outcomes: Counter;
  sweepLag: Gauge;
  stepUp: Counter;
  destinationsRefused: Counter;
  pumpingDecisions: Counter;
}

let instruments: { provider: MeterProvider; value: Instruments } | undefined;

/** The instruments of the meter provider registered now (the metrics API has no proxy provider). */
function current(): Instruments {
  const provider = metrics.getMeterProvider();
  if (instruments?.provider !== provider) {
    const meter = provider.getMeter(TELEMETRY_SCOPE);
    instruments = {
      provider,
      value: {
        starts: meter.createCounter(MetricName.Starts, { description: 'Verifications started (one SMS each).' }),
        startsRefused: meter.createCounter(MetricName.StartsRefused, { description: 'Starts refused by a limit.' }),
        outcomes: meter.createCounter(MetricName.Outcomes, { description: 'Attempt outcomes, counted when recorded.' }),
        sweepLag: meter.createGauge(MetricName.SweepLag, {
          description: 'Age of the oldest due attempt found by a sweep run.',
          unit: 's',
        }),
        stepUp: meter.createCounter(MetricName.StepUp, { description: 'Step-up guard decisions.' }),
        destinationsRefused: meter.createCounter(MetricName.DestinationsRefused, {
          description: 'Numbers the destination policy refused (no text sent).',
        }),
        pumpingDecisions: meter.createCounter(MetricName.PumpingDecisions, {
          description: 'Starts that tripped an SMS pumping rule, per rule.',
        }),
      },
    };
  }
  return instruments.value;
}

/**
 * Runs one recording. The providers are the app's code: a meter or a span processor that throws
 * must never fail a request that already had its effect (an SMS sent, an action run) nor a sweep.
 */
function quietly(record: () => void): void {
  try {
    record();
  } catch {
    // Telemetry is best effort: what it failed to record is lost, the work goes on.
  }
}

export function countStart(attributes: { action: string; platform: string }): void {
  quietly(() =>
    current().starts.add(1, { 'verify_kit.action': attributes.action, 'verify_kit.platform': attributes.platform }),
  );
}

export function countRefusedStart(budget: string): void {
  quietly(() => current().startsRefused.add(1, { 'verify_kit.budget': budget }));
}

export function countRefusedDestination(reason: string, entered: boolean): void {
  quietly(() => current().destinationsRefused.add(1, { 'verify_kit.reason': reason, 'verify_kit.entered': entered }));
}

export function countPumpingDecision(decision: string, reasons: readonly string[], country: string): void {
  quietly(() => {
    for (const reason of reasons) {
      current().pumpingDecisions.add(1, {
        'verify_kit.decision': decision,
        'verify_kit.reason': reason,
        'verify_kit.country': country,
      });
    }
  });
}

export function countOutcomes(
  count: number,
  outcome: 'fulfilled' | 'failed' | 'expired' | 'superseded',
  source: string,
  reason?: string,
): void {
  if (count === 0) return;
  const attributes = { 'verify_kit.outcome': outcome, 'verify_kit.source': source };
  quietly(() =>
    current().outcomes.add(count, reason === undefined ? attributes : { ...attributes, 'verify_kit.reason': reason }),
  );
}

export type StepUpEvent = 'required' | 'granted' | 'consumed' | 'denied' | 'expired';

export function countStepUp(event: StepUpEvent, scope: string, route: string): void {
  quietly(() =>
    current().stepUp.add(1, { 'verify_kit.step_up': event, 'verify_kit.scope': scope, 'verify_kit.route': route }),
  );
}

export function recordSweepLag(ageMs: number): void {
  quietly(() => current().sweepLag.record(Math.max(0, ageMs) / 1000));
}

/** What `work` gets while no SDK is registered: records nothing, like the API's own no-op span. */
const NOT_RECORDING: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * The kit's tracer, or undefined while no SDK is registered. The API's global provider is a proxy
 * whose delegate stays unset until an SDK registers; until then every span and context the API
 * would make per request is discarded, so none is made. Asked on every call (a property read), so
 * an SDK registered after the kit was created is used at once.
 */
function activeTracer(): Tracer | undefined {
  try {
    const provider = trace.getTracerProvider();
    if (provider instanceof ProxyTracerProvider) return provider.getDelegateTracer(TELEMETRY_SCOPE);
    return provider.getTracer(TELEMETRY_SCOPE);
  } catch {
    // The provider is the app's code: one that cannot give a tracer costs the spans, never the work.
    return undefined;
  }
}

/**
 * The span with every method guarded (`quietly`): the kit's code and `annotateSpan` call it freely.
 * A proxy, so a method a later API version adds is guarded too; chained calls return the guard.
 */
function guardedSpan(span: Span): Span {
  const guard: Span = new Proxy(span, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (key === 'spanContext' || key === 'isRecording') {
        return () => {
          try {
            return (value as () => unknown).call(target);
          } catch {
            return key === 'spanContext' ? INVALID_SPAN_CONTEXT : false;
          }
        };
      }
      return (...args: unknown[]) => {
        quietly(() => (value as (...a: unknown[]) => unknown).apply(target, args));
        return guard;
      };
    },
  });
  return guard;
}

/** A new span (guarded), or the no-op one when the tracer throws. */
function startSpan(tracer: Tracer, name: string, attributes: Attributes): Span {
  try {
    return guardedSpan(tracer.startSpan(name, { attributes }));
  } catch {
    return NOT_RECORDING;
  }
}

/** What a code looks like: `ECONNREFUSED`, a database's `23505`, `P2002`. */
const ERROR_CODE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * A thrown error's code as a span carries it: the kit's own, or another only when it is a code
 * carrying no part of the secret nor a number. The integrator's code may set any text (an answer's
 * `errorCode` a proxy filled with the Authorization header).
 */
function spanCode(error: unknown): string | undefined {
  if (error instanceof KitError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !ERROR_CODE.test(code) || mayBePhoneNumber(code)) return undefined;
  return redactSecretFragments(code) === code ? code : undefined;
}

/**
 * Runs `work` in an active span. A failure sets the span's status and the error's code
 * (`spanCode`), not the message or the cause (a cause may carry a request's headers). A tracer or
 * span processor that throws loses its span, never the work's result.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  if (tracer === undefined) return work(NOT_RECORDING);
  const span = startSpan(tracer, name, attributes);
  const run = async () => {
    try {
      return await work(span);
    } catch (error) {
      // Guarded: the work may throw anything, and reading it must not replace what it threw.
      quietly(() => {
        const code = spanCode(error);
        span.setStatus({ code: SpanStatusCode.ERROR, ...(code === undefined ? {} : { message: code }) });
        if (code !== undefined) span.setAttribute('verify_kit.error_code', code);
      });
      throw error;
    } finally {
      span.end();
    }
  };
  // The context manager is the app's too: one that throws, drops the callback's result or calls it
  // twice costs the span its children, never the work, which runs once and answers with its own result.
  let running: Promise<T> | undefined;
  try {
    context.with(trace.setSpan(context.active(), span), () => (running ??= run()));
  } catch {
    // Started already, it goes on; else it runs below, outside the span.
  }
  return running ?? run();
}

/**
 * `inSpan` for work whose span only adds attributes from its result. While no SDK is registered the
 * work's own promise is returned: no async step and no attributes of its own (the sweep reads and
 * fulfils thousands a second, each under a span).
 */
export function inResultSpan<T>(
  name: string,
  attributes: () => Attributes,
  work: () => Promise<T>,
  resultAttributes: (result: T) => Attributes,
): Promise<T> {
  if (activeTracer() === undefined) return work();
  return inSpan(name, attributes(), async (span) => {
    const result = await work();
    span.setAttributes(resultAttributes(result));
    return result;
  });
}

/** Adds attributes to the span of the work in progress, if any. */
export function annotateSpan(attributes: Attributes): void {
  quietly(() => trace.getActiveSpan()?.setAttributes(attributes));
}
