/**
 * A failed request's span carries the error's code (`verify_kit.error_code`, the status message)
 * only when it is a code: the kit's own, or another's such as `ECONNREFUSED` or `23505`. An error
 * of the integrator's code may carry any text as its `code` (an answer's `errorCode` passed on,
 * which a proxy fills with the Authorization header it was sent, or a user's phone number): such
 * a code is not put on the span, as no attribute carries the secret or a number.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanName } from '../../middleware/telemetry.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { USERS } from '../support/users.ts';

const spans = new InMemorySpanExporter();
let app: TestApp;
/** What the app's user lookup throws with as its `code`, set by each test. */
let thrownCode = '';

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  app = await startTestApp({
    kit: {
      // The app's own user service, its answer's errorCode passed on as the error's code.
      resolveUser: () => {
        throw Object.assign(new Error('user lookup failed'), { code: thrownCode });
      },
    },
  });
});
afterAll(async () => {
  await app?.close();
  trace.disable();
  context.disable();
});

/** The start span of a start refused by the failing lookup: its error code attribute and status message. */
async function failedStart(code: string) {
  thrownCode = code;
  spans.reset();
  const alice = await app.agent().signIn('alice');
  expect((await alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' })).status).toBe(500);
  const [start] = spans.getFinishedSpans().filter((span) => span.name === SpanName.Start);
  return { attribute: start?.attributes['verify_kit.error_code'], status: start?.status };
}

describe("a failed request's span: the error's code only when it is a code", () => {
  it('a code quoting the Authorization header (the client secret in base64) is not on the span', async () => {
    const basic = Buffer.from(`${app.clientId}:${app.secret}`).toString('base64');
    const { attribute, status } = await failedStart(`unauthorized: Basic ${basic}`);
    expect(attribute).toBeUndefined();
    expect(status?.message).toBeUndefined();
    expect(JSON.stringify(status)).not.toContain(basic.slice(-16));
  });

  it('a code naming a phone number is not on the span, spaced or as one word', async () => {
    const number = USERS.alice!.destination;
    for (const code of [`no_account:${number}`, `no_account_${number.slice(1)}`]) {
      const { attribute, status } = await failedStart(code);
      expect(attribute, code).toBeUndefined();
      expect(status?.message, code).toBeUndefined();
    }
  });

  it('a code such as ECONNREFUSED or a database error code is on the span as before', async () => {
    for (const code of ['ECONNREFUSED', '23505', 'P2002']) {
      const { attribute, status } = await failedStart(code);
      expect(attribute, code).toBe(code);
      expect(status, code).toEqual({ code: 2, message: code });
    }
  });
});
