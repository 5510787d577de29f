/**
 * Service faults, injected with the emulator's fault controls, against a kit app over real HTTP
 * (test/support/app.ts, client timeouts of a few hundred ms so "slower than the timeout" is
 * cheap). A recording proxy between the app and the emulator shows what the client really did
 * (retries, the Idempotency-Key, 409s, replays). Claims: every request answers within a bound,
 * no attempt produces a second SMS, no verified attempt is lost, nothing is fulfilled twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { openHostedPage, startTestEmulator, submitCode, type TestEmulator } from '../support/emulator.ts';
import { effectCounts, NO_PENDING_RECHECKS, startTestApp, type TestApp } from '../support/app.ts';
import { startServiceProxy, type Recorder } from '../support/security-stack.ts';
import { Agent, testAppSite } from '../support/agent.ts';

/**
 * Every request to the app must answer within this: the client's retry budget (4 s) plus one
 * headers timeout. undici's headers timer is coarse (about 1 s resolution), so a 400 ms timeout
 * fires somewhere between 0.4 and ~1.5 s; the delays below are chosen well past that.
 */
const BOUND_MS = 7000;
const CLIENT_ID = 'faults-client';
const CLIENT_SECRET = 'faults-secret-0123456789abcdef';

let dir: string;
let emulator: TestEmulator;
let proxy: Awaited<ReturnType<typeof startServiceProxy>>;
let app: TestApp;
const recorder: Recorder = { exchanges: [], logs: [] };
let userCount = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'faults-'));
  app = await startTestApp({
    database: { path: join(dir, 'app.sqlite') },
    service: async (returnUrl) => {
      emulator = await startTestEmulator({
        clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl }],
        log: (line) => recorder.logs.push(line),
      });
      proxy = await startServiceProxy(emulator.url, { tamper: undefined }, recorder);
      return { baseUrl: proxy.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
    },
    client: {
      timeouts: { connectMs: 500, headersMs: 400, bodyMs: 400 },
      retry: { maxAttempts: 40, baseDelayMs: 50, maxDelayMs: 300, budgetMs: 4000 },
    },
    kit: { landing: NO_PENDING_RECHECKS },
  });
});
afterEach(async () => {
  await emulator.control.setFaults({
    createFailures: 0,
    createDelayMs: 0,
    resetConnections: 0,
    statusFailures: 0,
    statusDelayMs: 0,
  });
});
afterAll(async () => {
  await app?.close();
  await proxy?.close();
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function newUser(): Promise<Agent> {
  userCount += 1;
  return new Agent(testAppSite(app.url)).signIn(`faulty${userCount}`);
}

/** The backend's POST /session exchanges since `from`, with their Idempotency-Key. */
function creates(from: number) {
  return recorder.exchanges
    .slice(from)
    .filter((x) => x.method === 'POST' && x.url.endsWith('/session'))
    .map((x) => ({
      key: x.requestHeaders['idempotency-key'],
      status: x.status,
      replayed: x.responseHeaders['idempotent-replayed'] === 'true',
      body: x.responseBody,
    }));
}

/** SMS the service sent for each Idempotency-Key the app used since `from`. */
async function smsPerKey(from: number): Promise<number[]> {
  const keys = [...new Set(creates(from).map((c) => c.key!))];
  const stats = await emulator.control.stats();
  return keys.map((k) => stats.smsByIdempotencyKey[k] ?? 0);
}

function within(answer: { ms: number }): void {
  expect(answer.ms).toBeLessThan(BOUND_MS);
}

/** The started attempt's handoff opens the hosted page; the code verifies; the landing fulfils once. */
async function finishThroughHostedPage(user: Agent, startBody: string) {
  const verifyUrl = /action="([^"]+)"/
    .exec(startBody.slice(startBody.indexOf('verify-kit-handoff')))![1]!
    .replace(/&amp;/g, '&');
  const hx = /name="hx" value="([^"]+)"/.exec(startBody)![1]!;
  const attempt = await app.latestAttempt();
  const page = await openHostedPage(verifyUrl, hx);
  expect(page.response.status).toBe(200);
  const code = await emulator.control.codeFor(attempt.sessionId);
  const done = await submitCode(verifyUrl, page, code);
  expect(done.status).toBe(303);
  const landing = await user.landFor(attempt.sessionId, attempt.state);
  within(landing);
  expect(landing.location).toBe('/done');
  expect((await effectCounts(app)).get(attempt.sessionId)).toBe(1);
  return attempt;
}

describe('create faults: one SMS per attempt, the start answers within the bound', () => {
  it('create slower than the client headers timeout: the retry meets 409 in flight, then the replay; one SMS; the replayed handoff works', async () => {
    const user = await newUser();
    const from = recorder.exchanges.length;
    await emulator.control.setFaults({ createDelayMs: 2000 });
    const started = await user.tryStart('grant');
    within(started);
    expect(started.status).toBe(200);
    const seen = creates(from);
    expect(new Set(seen.map((c) => c.key)).size).toBe(1); // every try used the same key
    expect(seen.some((c) => c.status === 409 && c.body.includes('idempotency_request_in_flight'))).toBe(true);
    expect(seen.some((c) => c.status === 200 && c.replayed)).toBe(true);
    expect(await smsPerKey(from)).toEqual([1]);
    await emulator.control.setFaults({ createDelayMs: 0 });
    await finishThroughHostedPage(user, started.body);
  });

  it('create slower than the whole retry budget: a clear 503 within the bound, no attempt stored, still only one SMS for the key', async () => {
    const user = await newUser();
    const from = recorder.exchanges.length;
    const before = await app.attemptCount();
    const t0 = Date.now();
    await emulator.control.setFaults({ createDelayMs: 5000 });
    const started = await user.tryStart('grant');
    within(started);
    expect(started.status).toBe(503);
    expect(started.body).toMatch(/cannot be reached|try again/i);
    expect(await app.attemptCount()).toBe(before);
    expect(new Set(creates(from).map((c) => c.key)).size).toBe(1);
    // The held create finishes on the service later: one SMS for that key, never two.
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + 5500 - Date.now())));
    expect(await smsPerKey(from)).toEqual([1]);
    expect(await app.attemptCount()).toBe(before);
  });

  it('connection reset BEFORE the service acted: the retry creates the one session; one SMS', async () => {
    const user = await newUser();
    const from = recorder.exchanges.length;
    await emulator.control.setFaults({ resetConnections: 2, resetPhase: 'before' });
    const started = await user.tryStart('grant');
    within(started);
    expect(started.status).toBe(200);
    expect(await smsPerKey(from)).toEqual([1]);
    await finishThroughHostedPage(user, started.body);
  });

  it('connection reset AFTER the service acted (the lost response): the retry gets the replay; one SMS; the handoff works', async () => {
    const user = await newUser();
    const from = recorder.exchanges.length;
    await emulator.control.setFaults({ resetConnections: 1, resetPhase: 'after' });
    const started = await user.tryStart('grant');
    within(started);
    expect(started.status).toBe(200);
    expect(await smsPerKey(from)).toEqual([1]);
    expect(creates(from).some((c) => c.status === 200 && c.replayed)).toBe(true);
    await finishThroughHostedPage(user, started.body);
  });

  it('a burst of 5xx shorter than the tries: the start succeeds with one SMS', async () => {
    const user = await newUser();
    const from = recorder.exchanges.length;
    await emulator.control.setFaults({ createFailures: 4, createStatus: 503 });
    const started = await user.tryStart('grant');
    within(started);
    expect(started.status).toBe(200);
    expect(creates(from).filter((c) => c.status === 503)).toHaveLength(4);
    expect(await smsPerKey(from)).toEqual([1]);
    await finishThroughHostedPage(user, started.body);
  });

  it('a burst of 5xx longer than the tries: a clear 503 within the bound, no SMS, no attempt; the next start works', async () => {
    const user = await newUser();
    const before = await app.attemptCount();
    const from = recorder.exchanges.length;
    await emulator.control.setFaults({ createFailures: 100, createStatus: 500 });
    const started = await user.tryStart('grant');
    within(started);
    expect(started.status).toBe(503);
    expect(await smsPerKey(from)).toEqual([0]);
    expect(await app.attemptCount()).toBe(before);
    await emulator.control.setFaults({ createFailures: 0 });
    const next = recorder.exchanges.length;
    const again = await user.tryStart('grant');
    expect(again.status).toBe(200);
    expect(await smsPerKey(next)).toEqual([1]);
  });
});

describe('status-read faults: landings answer within the bound, nothing is fulfilled twice or lost', () => {
  async function verifiedAttempt(user: Agent) {
    const started = await user.tryStart('grant');
    expect(started.status).toBe(200);
    const attempt = await app.latestAttempt();
    expect((await emulator.control.complete(attempt.sessionId, { outcome: 'verified' })).status).toBe(200);
    return attempt;
  }

  it('status reads slower than the client timeout: a 503 page within the bound, nothing fulfilled; after recovery the landing fulfils once', async () => {
    const user = await newUser();
    const attempt = await verifiedAttempt(user);
    await emulator.control.setFaults({ statusDelayMs: 3000 });
    for (let i = 0; i < 1; i++) {
      const landing = await user.landFor(attempt.sessionId, attempt.state);
      within(landing);
      expect(landing.status).toBe(503);
      expect((await effectCounts(app)).get(attempt.sessionId)).toBeUndefined();
    }
    await emulator.control.setFaults({ statusDelayMs: 0 });
    const landing = await user.landFor(attempt.sessionId, attempt.state);
    expect(landing.location).toBe('/done');
    expect((await effectCounts(app)).get(attempt.sessionId)).toBe(1);
  });

  it('slow status reads during a sweep: the sweep marks nothing and ends within its budget; the next fault-free sweep fulfils', async () => {
    const user = await newUser();
    const attempt = await verifiedAttempt(user);
    await emulator.control.setFaults({ statusDelayMs: 3000 });
    const later = { ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 };
    const started = Date.now();
    const report = await runSweep(later, { owner: 'slow-sweep', timeBudgetMs: 3000 });
    expect(Date.now() - started).toBeLessThan(3000 + BOUND_MS);
    expect(report.fulfilled).toBe(0);
    expect(report.errors).toBeGreaterThan(0);
    expect(report.serviceReachable).toBe(false);
    expect((await effectCounts(app)).get(attempt.sessionId)).toBeUndefined();
    await emulator.control.setFaults({ statusDelayMs: 0 });
    const recovered = await runSweep({ ...later, now: () => Date.now() + 60 * 60_000 }, { owner: 'recovered-sweep' });
    expect(recovered.fulfilled).toBeGreaterThanOrEqual(1);
    expect((await effectCounts(app)).get(attempt.sessionId)).toBe(1);
  });

  it('a burst of 5xx on status reads with 10 concurrent landings: each answers within the bound, at most one fulfilment, then exactly one', async () => {
    const user = await newUser();
    const attempt = await verifiedAttempt(user);
    await emulator.control.setFaults({ statusFailures: 12, statusStatus: 502 });
    const landings = await Promise.all(
      Array.from({ length: 10 }, () => user.landFor(attempt.sessionId, attempt.state)),
    );
    for (const landing of landings) {
      within(landing);
      expect([303, 503]).toContain(landing.status);
    }
    expect((await effectCounts(app)).get(attempt.sessionId) ?? 0).toBeLessThanOrEqual(1);
    await emulator.control.setFaults({ statusFailures: 0 });
    expect((await user.landFor(attempt.sessionId, attempt.state)).location).toBe('/done');
    expect((await effectCounts(app)).get(attempt.sessionId)).toBe(1);
  });
});

describe('across this whole file', () => {
  it('no attempt produced a second SMS, and every verified attempt is fulfilled exactly once after a final fault-free sweep', async () => {
    const stats = await emulator.control.stats();
    expect(Object.keys(stats.smsByIdempotencyKey).length).toBeGreaterThan(5);
    for (const [key, n] of Object.entries(stats.smsByIdempotencyKey)) expect(n, key).toBe(1);
    await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 2 * 60 * 60_000 }, { owner: 'final-sweep' });
    const rows = await app.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER });
    const effects = await effectCounts(app);
    for (const row of rows) {
      const status = await fetch(`${emulator.url}/session/${encodeURIComponent(row.sessionId)}`, {
        headers: { authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}` },
      }).then((r) => r.json() as Promise<{ status: string }>);
      if (status.status === 'verified') {
        expect(row.outcome, row.sessionId).toBe('fulfilled');
        expect(effects.get(row.sessionId), row.sessionId).toBe(1);
      } else {
        expect(effects.get(row.sessionId), row.sessionId).toBeUndefined();
      }
    }
    for (const [, n] of effects) expect(n).toBe(1);
  });
});
