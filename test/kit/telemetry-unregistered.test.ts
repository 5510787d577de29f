/**
 * Spans cost nothing until the app registers an OpenTelemetry SDK: `inSpan` then hands the work a
 * span that records nothing (no context, no span object per request), yet an SDK registered after
 * the kit exists gets every span from the next call on, and failures still reach the caller.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { inSpan } from '../../middleware/telemetry.ts';

const recording = (name: string) => inSpan(name, { 'verify_kit.route': name }, async (span) => span.isRecording());

describe('inSpan without and with a registered SDK', () => {
  it('records nothing before registration, every span while registered, nothing after disable', async () => {
    expect(await recording('before')).toBe(false);
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    try {
      expect(await recording('while')).toBe(true);
    } finally {
      trace.disable();
    }
    expect(await recording('after')).toBe(false);
    const finished = exporter.getFinishedSpans();
    expect(finished.map((span) => span.name)).toEqual(['while']);
    expect(finished[0]?.attributes).toEqual({ 'verify_kit.route': 'while' });
  });

  it('makes no context per call while no SDK is registered (even with a context manager)', async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    try {
      const outer = context.active();
      expect(await inSpan('plain', {}, async () => context.active() === outer)).toBe(true);
    } finally {
      context.disable();
    }
  });

  it('passes the work’s failure through unchanged when no SDK is registered', async () => {
    const failure = new KitError(KitErrorCode.ServiceUnavailable, 'down');
    await expect(
      inSpan('failing', {}, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });
});
