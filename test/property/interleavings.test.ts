/**
 * Property-based (fast-check): random interleavings of starts (web and mobile), completions on the
 * service (verified / failed), landings and reloads from the owner's or another user's browser,
 * crossed landings, mobile completions, sweep runs, injected service faults (5xx bursts on reads
 * and creates, connection resets before/after create) and a corrupted service echo for chosen
 * attempts, over several users and attempts, against a web kit and a mobile kit sharing one SQLite
 * store (test/support/app.ts), over real HTTP to the emulator through a rewriting proxy.
 *
 * Invariants, checked after every step and at the end of every run:
 *  - at most one fulfilment (effect row) per attempt;
 *  - an effect exists only for an attempt the service really reports verified, with the stored
 *    state, the stored userRef and the stored sessionId, never for a corrupted-echo attempt;
 *  - the attempt's mark and its effect agree;
 *  - the newest verified intent wins: per user (one action, web and mobile alike) effects are
 *    applied in increasing start order, never an older attempt after a newer one, and an attempt
 *    is superseded only by a newer fulfilled one;
 *  - after the faults stop and a final sweep runs, every attempt verified on the service (within
 *    24 h, echo intact) is fulfilled or superseded by a newer fulfilled one, and each user's
 *    newest such attempt is fulfilled;
 *  - an attempt failed on the service is recorded failed (or superseded), unless its echo was
 *    corrupted before it was read: another session's failure ends nothing;
 *  - no Idempotency-Key ever produced a second SMS.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { startTestEmulator, type TestEmulator } from '../support/emulator.ts';
import { effectCounts, MOBILE_RETURN_URL, NO_PENDING_RECHECKS, startTestApp, type TestApp } from '../support/app.ts';
import { startServiceProxy, type Recorder } from '../support/security-stack.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { describeEachStore } from '../support/stores.ts';
import { Agent, testAppSite } from '../support/agent.ts';

/** Property runs per store: every step is several HTTP and database round trips. */
const RUNS = { sqlite: 25, postgres: 15 } as const;

const WEB = { clientId: 'prop-web', clientSecret: `prop-web-${randomBytes(8).toString('hex')}` };
const MOBILE = { clientId: 'prop-mobile', clientSecret: `prop-mobile-${randomBytes(8).toString('hex')}` };

let dir: string;
let database: TestDatabase | undefined;
let emulator: TestEmulator;
let proxy: Awaited<ReturnType<typeof startServiceProxy>>;
let app: TestApp;
/** Sessions whose status echo the proxy corrupts (a compromised or buggy service answer). */
const corrupted = new Set<string>();
const recorder: Recorder = { exchanges: [], logs: [] };
const tamper = {
  tamper: (body: Record<string, unknown>, sessionId: string) =>
    corrupted.has(sessionId)
      ? { ...body, userRef: 'user-mallory', state: randomBytes(32).toString('base64url') }
      : body,
};

async function startApp(kind: 'sqlite' | 'postgres'): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'prop-'));
  database = kind === 'postgres' ? await createTestDatabase({ max: 2 }) : undefined;
  app = await startTestApp({
    database: database === undefined ? { path: join(dir, 'app.sqlite') } : { url: database.url },
    service: async (returnUrl) => {
      emulator = await startTestEmulator({
        clients: [
          { ...WEB, secret: WEB.clientSecret, returnUrl },
          { ...MOBILE, secret: MOBILE.clientSecret, returnUrl: MOBILE_RETURN_URL, platform: 'mobile' },
        ],
      });
      proxy = await startServiceProxy(emulator.url, tamper, recorder);
      return { baseUrl: proxy.url, ...WEB };
    },
    mobileKit: MOBILE,
    client: {
      timeouts: { connectMs: 500, headersMs: 2000, bodyMs: 2000 },
      retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20, budgetMs: 1000 },
    },
    kit: { landing: NO_PENDING_RECHECKS },
  });
  recorder.exchanges.length = 0;
}

async function stopApp(): Promise<void> {
  await app?.close();
  await proxy?.close();
  await emulator?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
  corrupted.clear();
  ended.clear();
}

type Op =
  | { t: 'start'; user: number; mobile: boolean }
  | { t: 'verify'; a: number }
  | { t: 'fail'; a: number; reason: string }
  | { t: 'land'; a: number; by: number }
  | { t: 'burst'; a: number; n: number }
  | { t: 'cross'; a: number; b: number }
  | { t: 'sweep'; mobile: boolean }
  | { t: 'statusFaults'; n: number }
  | { t: 'createFault'; kind: 'fail' | 'resetBefore' | 'resetAfter'; n: number }
  | { t: 'corrupt'; a: number };

const USERS = 3;
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ t: fc.constant('start' as const), user: fc.nat(USERS - 1), mobile: fc.boolean() }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('verify' as const), a: fc.nat(20) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('fail' as const),
      a: fc.nat(20),
      reason: fc.constantFrom('otp_locked', 'device_changed', 'session_binding_failed', 'brand_new_reason'),
    }),
  },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('land' as const), a: fc.nat(20), by: fc.nat(USERS - 1) }) },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('burst' as const), a: fc.nat(20), n: fc.integer({ min: 2, max: 6 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('cross' as const), a: fc.nat(20), b: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('sweep' as const), mobile: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('statusFaults' as const), n: fc.integer({ min: 0, max: 4 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('createFault' as const),
      kind: fc.constantFrom('fail' as const, 'resetBefore' as const, 'resetAfter' as const),
      n: fc.integer({ min: 1, max: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('corrupt' as const), a: fc.nat(20) }) },
);

interface Attempt {
  sessionId: string;
  state: string;
  owner: number;
  mobile: boolean;
}

interface AttemptRow {
  session_id: string;
  state: string;
  user_ref: string;
  platform: string;
  outcome: string;
  start_seq: number;
  superseded_by: string | null;
}

/** Every stored attempt, read through the kit's store. */
async function rows(): Promise<AttemptRow[]> {
  const found = await app.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER });
  return found.map((a) => ({
    session_id: a.sessionId,
    state: a.state,
    user_ref: a.userRef,
    platform: a.platform,
    outcome: a.outcome,
    start_seq: a.startSeq,
    superseded_by: a.supersededBy,
  }));
}

/** "An older attempt must never be applied after a newer one of the same user and action was applied." */
async function checkOrdering(bySession: Map<string, AttemptRow>): Promise<void> {
  const seqOf = new Map((await rows()).map((row) => [row.session_id, row.start_seq]));
  const effects = await app.query<{ userRef: string; sessionId: string }>(
    'SELECT user_ref AS "userRef", session_id AS "sessionId" FROM test_effects ORDER BY id',
  );
  const applied = effects.map(({ userRef, sessionId }) => ({ userRef, seq: seqOf.get(sessionId) }));
  const lastApplied = new Map<string, number>();
  for (const { userRef, seq } of applied) {
    const previous = lastApplied.get(userRef) ?? -1;
    expect(Number(seq), `${userRef} applied an older attempt after a newer one`).toBeGreaterThan(previous);
    lastApplied.set(userRef, Number(seq));
  }
  for (const row of bySession.values()) {
    if (row.outcome !== 'superseded') continue;
    const by = bySession.get(row.superseded_by ?? '');
    expect(by, `${row.session_id} superseded by an unknown attempt`).toBeDefined();
    expect(by!).toMatchObject({ outcome: 'fulfilled', user_ref: row.user_ref });
    expect(by!.start_seq).toBeGreaterThan(row.start_seq);
  }
}

/** What the service really holds, kept by the test itself (the status API is subject to the injected faults). */
const ended = new Map<string, 'verified' | 'failed'>();

/** The state and userRef the service stored at create, from the recorded POST /session exchanges. */
function createdWith(sessionId: string): { state: string; userRef: string } | undefined {
  for (const x of recorder.exchanges) {
    if (x.method !== 'POST' || !x.url.endsWith('/session') || x.status !== 200) continue;
    const answer = JSON.parse(x.responseBody) as { sessionId?: string };
    if (answer.sessionId !== sessionId) continue;
    const sent = JSON.parse(x.requestBody) as { state: string; userRef: string };
    return { state: sent.state, userRef: sent.userRef };
  }
  return undefined;
}

function serviceStatus(row: Pick<AttemptRow, 'session_id'>): { status: string; state?: string; userRef?: string } {
  return { status: ended.get(row.session_id) ?? 'pending', ...createdWith(row.session_id) };
}

/** The invariants that must hold at every moment. */
async function checkSafety(): Promise<void> {
  type Effect = { session_id: string; state: string; user_ref: string };
  const effects = await app.query<Effect>('SELECT session_id, state, user_ref FROM test_effects');
  const counts = await effectCounts(app);
  for (const [sessionId, n] of counts) expect(n, `effects of ${sessionId}`).toBe(1);
  const bySession = new Map((await rows()).map((r) => [r.session_id, r]));
  for (const effect of effects) {
    const row = bySession.get(effect.session_id);
    expect(row, effect.session_id).toBeDefined();
    expect(row!.outcome).toBe('fulfilled');
    expect(effect.state).toBe(row!.state);
    expect(effect.user_ref).toBe(row!.user_ref);
    expect(corrupted.has(effect.session_id), `corrupted ${effect.session_id} fulfilled`).toBe(false);
    const status = serviceStatus(row!);
    expect(status).toMatchObject({ status: 'verified', state: row!.state, userRef: row!.user_ref });
  }
  for (const row of bySession.values()) {
    if (row.outcome === 'fulfilled') expect(counts.get(row.session_id), row.session_id).toBe(1);
    else expect(counts.get(row.session_id), row.session_id).toBeUndefined();
  }
  await checkOrdering(bySession);
}

const clearFaults = () =>
  emulator.control.setFaults({
    createFailures: 0,
    resetConnections: 0,
    statusFailures: 0,
    statusDelayMs: 0,
    createDelayMs: 0,
  });

let run = 0;

async function execute(ops: Op[]): Promise<void> {
  run += 1;
  // No counters to reset: startTestApp's start limits are generous, the limits are not what this proves.
  const users = await Promise.all(
    Array.from({ length: USERS }, (_, i) => new Agent(testAppSite(app.url)).signIn(`r${run}u${i}`)),
  );
  const attempts: Attempt[] = [];
  const pick = (i: number) => (attempts.length === 0 ? undefined : attempts[i % attempts.length]);
  let statusFaultsOn = false;

  for (const op of ops) {
    switch (op.t) {
      case 'start': {
        const user = users[op.user]!;
        const before = new Set((await rows()).map((r) => r.session_id));
        const answer = op.mobile
          ? await user.request('/m/verify/start', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ action: 'grant' }),
            })
          : await user.tryStart('grant');
        expect([200, 503]).toContain(answer.status);
        if (answer.status === 200) {
          const added = (await rows()).filter((r) => !before.has(r.session_id));
          expect(added).toHaveLength(1);
          const row = added[0]!;
          attempts.push({ sessionId: row.session_id, state: row.state, owner: op.user, mobile: op.mobile });
        } else {
          expect((await rows()).length).toBe(before.size); // a failed start stores nothing
        }
        break;
      }
      case 'verify':
      case 'fail': {
        const a = pick(op.a);
        if (a === undefined) break;
        const body = op.t === 'verify' ? { outcome: 'verified' } : { outcome: 'failed', reason: op.reason };
        const done = await emulator.control.complete(a.sessionId, body);
        expect([200, 409]).toContain(done.status);
        if (done.status === 200) ended.set(a.sessionId, op.t === 'verify' ? 'verified' : 'failed');
        break;
      }
      case 'land': {
        const a = pick(op.a);
        if (a === undefined) break;
        const user = users[op.by]!;
        const answer = a.mobile
          ? await user.request('/verify/mobile/complete', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ session_id: a.sessionId, state: a.state }),
            })
          : await user.landFor(a.sessionId, a.state);
        const allowed = statusFaultsOn || corrupted.has(a.sessionId) ? [200, 303, 502, 503] : [200, 303];
        expect(allowed, `${answer.status} ${answer.body.slice(0, 120)}`).toContain(answer.status);
        if (answer.status === 303) {
          expect(op.by).toBe(a.owner); // only the owner is redirected to the result
          expect(answer.location).toBe('/done');
        }
        if (a.mobile && answer.status === 200 && op.by !== a.owner)
          expect(JSON.parse(answer.body)).toEqual({ outcome: 'processed' });
        break;
      }
      case 'burst': {
        // Reloads, double clicks and a second tab at once: concurrent landings (or completions) by the owner.
        const a = pick(op.a);
        if (a === undefined) break;
        const user = users[a.owner]!;
        const answers = await Promise.all(
          Array.from({ length: op.n }, () =>
            a.mobile
              ? user.request('/verify/mobile/complete', {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ session_id: a.sessionId, state: a.state }),
                })
              : user.landFor(a.sessionId, a.state),
          ),
        );
        const allowed = statusFaultsOn || corrupted.has(a.sessionId) ? [200, 303, 502, 503] : [200, 303];
        for (const answer of answers)
          expect(allowed, `${answer.status} ${answer.body.slice(0, 120)}`).toContain(answer.status);
        break;
      }
      case 'cross': {
        const a = pick(op.a);
        const b = pick(op.b);
        if (a === undefined || b === undefined || a === b) break;
        const answer = await users[a.owner]!.landFor(a.sessionId, b.state);
        expect(answer.status).toBe(400);
        break;
      }
      case 'sweep': {
        const deps = op.mobile ? contextOf(app.mobileKit!) : contextOf(app.kit);
        await runSweep({ ...deps, now: () => Date.now() + 10 * 60_000 }, { owner: `prop-${run}`, timeBudgetMs: 5000 });
        break;
      }
      case 'statusFaults': {
        await emulator.control.setFaults({ statusFailures: op.n, statusStatus: 503 });
        statusFaultsOn = op.n > 0;
        break;
      }
      case 'createFault': {
        if (op.kind === 'fail') await emulator.control.setFaults({ createFailures: op.n, createStatus: 503 });
        else
          await emulator.control.setFaults({
            resetConnections: op.n,
            resetPhase: op.kind === 'resetBefore' ? 'before' : 'after',
          });
        break;
      }
      case 'corrupt': {
        // From now on the service's echo for this attempt is corrupted; one already fulfilled stays so.
        const a = pick(op.a);
        const stored = await rows();
        const isFulfilled = (r: AttemptRow) => r.session_id === a?.sessionId && r.outcome === 'fulfilled';
        const fulfilled = a !== undefined && stored.some(isFulfilled);
        if (a !== undefined && !fulfilled) corrupted.add(a.sessionId);
        break;
      }
    }
    await checkSafety();
  }

  // The service recovers; a final sweep finishes every verified attempt nobody landed.
  await clearFaults();
  // Each kit's sweep reads with its own client registration and claims only its platform's
  // attempts (one shared store), so both run, twice, later each time.
  for (const [i, deps] of [
    contextOf(app.kit),
    contextOf(app.mobileKit!),
    contextOf(app.kit),
    contextOf(app.mobileKit!),
  ].entries()) {
    await runSweep(
      { ...deps, now: () => Date.now() + (60 + 20 * i) * 60_000 },
      { owner: `prop-final-${run}-${i}`, timeBudgetMs: 10_000 },
    );
  }
  await checkSafety();
  const counts = await effectCounts(app);
  const stored = await rows();
  const newestVerified = new Map<string, AttemptRow>();
  for (const a of attempts) {
    const row = stored.find((r) => r.session_id === a.sessionId)!;
    const status = serviceStatus(row);
    const verifiedIntact = status.status === 'verified' && !corrupted.has(a.sessionId);
    if (verifiedIntact) {
      // Nothing verified is lost: applied, or replaced by a newer applied intent.
      expect(['fulfilled', 'superseded'], `${a.sessionId} verified`).toContain(row.outcome);
      if ((newestVerified.get(row.user_ref)?.start_seq ?? -1) < row.start_seq) newestVerified.set(row.user_ref, row);
    } else {
      expect(counts.get(a.sessionId) ?? 0, `${a.sessionId} ${status.status}`).toBe(0);
    }
    // Failed on the service: recorded as failed, unless a newer fulfilled attempt of the same user and
    // action superseded it while it was still pending here (checkOrdering checks that newer one). A
    // failure echoing another session's state ends nothing: one corrupted before it was read stays pending.
    if (status.status === 'failed') {
      const recorded = corrupted.has(a.sessionId) ? ['failed', 'superseded', 'pending'] : ['failed', 'superseded'];
      expect(recorded, `${a.sessionId} failed`).toContain(row.outcome);
    }
  }
  for (const [userRef, row] of newestVerified) {
    expect(counts.get(row.session_id), `${userRef}'s newest verified attempt`).toBe(1);
  }
  const stats = await emulator.control.stats();
  for (const [key, n] of Object.entries(stats.smsByIdempotencyKey)) expect(n, key).toBe(1);
}

describeEachStore('random interleavings of landings, reloads, mobile completions, sweeps and faults', (kind) => {
  beforeAll(() => startApp(kind.name));
  afterAll(stopApp);

  it(
    'keep every invariant (at most once, only when truly verified and matching, nothing lost, one SMS per ' +
      'attempt)',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 14 }), async (ops) => {
          try {
            await execute(ops);
          } finally {
            await clearFaults();
          }
        }),
        {
          numRuns: RUNS[kind.name],
          endOnFailure: true,
          // Besides the random runs, one fixed run guarantees every path below is exercised.
          examples: [
            [
              [
                { t: 'start', user: 0, mobile: false },
                { t: 'start', user: 1, mobile: true },
                { t: 'start', user: 2, mobile: false },
                { t: 'verify', a: 0 },
                { t: 'verify', a: 1 },
                { t: 'fail', a: 2, reason: 'otp_locked' },
                { t: 'land', a: 0, by: 0 },
                { t: 'burst', a: 1, n: 3 },
                { t: 'land', a: 2, by: 2 },
                { t: 'sweep', mobile: false },
              ],
            ],
            // One user's older and newer intents (web, then mobile) both verified; the newer lands first.
            [
              [
                { t: 'start', user: 0, mobile: false },
                { t: 'start', user: 0, mobile: true },
                { t: 'verify', a: 0 },
                { t: 'verify', a: 1 },
                { t: 'land', a: 1, by: 0 },
                { t: 'land', a: 0, by: 0 },
                { t: 'sweep', mobile: false },
              ],
            ],
          ],
        },
      );
      // The runs really exercised the paths (not vacuous): fulfilments by several routes happened.
      const fulfilled = await app.store.listAttempts({ outcome: 'fulfilled', limit: Number.MAX_SAFE_INTEGER });
      expect([...new Set(fulfilled.map((a) => a.platform))].sort()).toEqual(['mobile', 'web']);
      const stored = await rows();
      expect(stored.some((r) => r.outcome === 'failed')).toBe(true);
      expect(stored.some((r) => r.outcome === 'superseded')).toBe(true);
    },
  );
});
