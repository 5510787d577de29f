/**
 * The client secret appears only in the Authorization header, also when a service (or a proxy in
 * front of it) answers a status read with a failure reason that quotes the request it was sent:
 * the kit keeps a reason only when it is a code, so the completion log line, the span attribute
 * `verify_kit.reason` and the outcomes metric's attribute say `unknown` instead. A reason that is
 * a code, known or not, is kept as the service gave it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const spans = new InMemorySpanExporter();
const reader = new CollectingReader();
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(() => {
  trace.disable();
  metrics.disable();
  context.disable();
});

const clientId = 'acme';
const secret = `kit-secret-${randomBytes(16).toString('hex')}`;
const basic = Buffer.from(`${clientId}:${secret}`).toString('base64');
/** Past its first group and short of its last, the Basic value encodes the secret's bytes alone. */
const secretPart = basic.slice(8, -4);

let service: Server | undefined;
let app: TestApp | undefined;
afterAll(async () => {
  await app?.close();
  if (service !== undefined) {
    service.closeAllConnections();
    await new Promise((resolve) => service!.close(resolve));
  }
});

/** A service that creates sessions normally and reports each one failed: the first one's reason quoting the request. */
async function echoingService(): Promise<string> {
  let created = 0;
  const states = new Map<string, { state: string; userRef: string }>();
  service = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST') {
        const input = JSON.parse(body) as { state: string; userRef: string };
        const sessionId = `sess-${++created}`;
        states.set(sessionId, input);
        const port = (service!.address() as AddressInfo).port;
        res.end(
          JSON.stringify({
            isSuccess: true,
            sessionId,
            verifyUrl: `http://127.0.0.1:${port}/verify`,
            handoff: `hx-${created}`,
            expiresInSeconds: 120,
          }),
        );
        return;
      }
      // e.g. a gateway that failed the upstream call and says what it sent
      const quoting = `upstream_auth_error (Authorization: ${req.headers.authorization ?? ''})`;
      const reason = req.url?.endsWith('/sess-1') ? quoting : 'carrier_blocked';
      res.end(JSON.stringify({ isSuccess: true, status: 'failed', reason }));
    });
  });
  await new Promise<void>((resolve) => service!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
}

describe("a failed status whose reason quotes the client's Authorization header", () => {
  let logs: string[] = [];
  let attributes: string[] = [];
  let metricText = '';
  beforeAll(async () => {
    const baseUrl = await echoingService();
    app = await startTestApp({ service: async () => ({ baseUrl, clientId, clientSecret: secret }) });
    for (const user of ['alice', 'bob']) {
      const agent = await app.agent().signIn(user);
      const started = await agent.start('grant_badge');
      const landed = await agent.landFor(started.sessionId, started.state);
      expect(landed.status).toBeLessThan(500);
    }
    logs = [...app.logs];
    attributes = spans.getFinishedSpans().map((span) => JSON.stringify(span.attributes));
    metricText = JSON.stringify((await reader.collect()).resourceMetrics);
    await app.close();
    app = undefined;
  });

  it('log line: the completion line says the reason is unknown, and carries no part of the secret', () => {
    const failed = logs.filter((line) => line.includes('"outcome":"failed"'));
    expect(failed.map((line) => (JSON.parse(line) as { reason: string }).reason).sort()).toEqual([
      'carrier_blocked',
      'unknown',
    ]);
    for (const line of logs) expect(line, `log line: ${line}`).not.toContain(secretPart);
  });

  it('span attribute verify_kit.reason carries no part of the secret', () => {
    expect(attributes.join('\n')).toContain('"verify_kit.reason":"unknown"');
    for (const attrs of attributes) expect(attrs, `span attributes: ${attrs}`).not.toContain(secretPart);
  });

  it('metric attribute verify_kit.reason (outcomes counter) carries no part of the secret', () => {
    expect(metricText).toContain('"verify_kit.reason":"unknown"');
    expect(metricText, 'metric attributes').not.toContain(secretPart);
  });
});
