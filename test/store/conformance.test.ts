/**
 * The store contract (middleware/store/types.ts), one suite run unchanged against every store the
 * kit ships: SQLite and PostgreSQL. What only one store does (SQLite's synchronous fulfil, the
 * PostgreSQL pool option) is in sqlite-store.test.ts and postgres-store.test.ts.
 * The racing processes run on the stores as built (test/fixtures/*-racer.mjs): needs `npm run
 * build` (npm test builds dist/ first).
 */
import { fork } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewAttempt, NewStepUpIntent, StepUpGrant, StepUpStore } from '../../middleware/store/types.ts';
import { racerOnBuiltStores } from '../support/built.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { fulfilOnce, newAttempt, scheduleNextCheck, storedAttempt } from '../support/attempts.ts';

const HOUR = 3_600_000;

function attempt(n: number, overrides: Partial<NewAttempt> = {}): NewAttempt {
  const params = { n, note: 'ünïcode' };
  return newAttempt(n, {
    userRef: `user-${n % 3}`,
    action: 'confirm_phone',
    params,
    sensitivity: 'normal',
    ...overrides,
  });
}

/** The n-th kept form of a user (of `user-${n % 3}` unless overridden), live from 1_000_000 for 15 minutes. */
function intent(n: number, overrides: Partial<NewStepUpIntent> = {}): NewStepUpIntent {
  return {
    intentId: `intent-${n}`,
    userRef: `user-${n % 3}`,
    scope: 'payout',
    browserSession: 'browser-1',
    resourceKey: `acct-${n}`,
    method: 'POST',
    path: `/accounts/acct-${n}/payee`,
    fields: { iban: `IBAN-SECRET-${n}` },
    createdAt: 1_000_000,
    expiresAt: 1_000_000 + 15 * 60_000,
    ...overrides,
  };
}

describeEachStore('store contract', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('keeps an attempt per state with its server-side parameters, and finds it again after a restart', async () => {
    await h.store.insertAttempt(attempt(1));
    await h.reopen();
    const found = await h.store.findAttemptByState('state-1');
    expect(found).toMatchObject({
      sessionId: 'session-1',
      params: { n: 1, note: 'ünïcode' },
      outcome: 'pending',
      fulfilledAt: null,
      createdAt: 1_000_000,
      nextCheckAt: 1_000_000,
      sweepChecks: 0,
      platform: 'web',
      sensitivity: 'normal',
    });
    expect(await h.store.findAttemptByState('state-2')).toBeUndefined();
  });

  it('keeps the userRef the service was sent beside the user, through every read (null when it was the user)', async () => {
    await h.store.insertAttempt(attempt(1, { serviceUserRef: 'vkd1_bound-to-user-and-number' }));
    await h.store.insertAttempt(attempt(2));
    await h.reopen();
    const bound = { userRef: 'user-1', serviceUserRef: 'vkd1_bound-to-user-and-number' };
    expect(await h.store.findAttemptByState('state-1')).toMatchObject(bound);
    expect(await h.store.findAttemptBySessionId('session-1')).toMatchObject(bound);
    expect(await h.store.findAttemptByState('state-2')).toMatchObject({ userRef: 'user-2', serviceUserRef: null });
    const claimed = await h.store.claimDueAttempts({
      now: 2_000_000,
      owner: 'o',
      limit: 10,
      leaseMs: 60_000,
      maxAgeMs: 24 * HOUR,
    });
    expect(claimed.find((a) => a.sessionId === 'session-1')).toMatchObject(bound);
    expect(claimed.find((a) => a.sessionId === 'session-2')).toMatchObject({ serviceUserRef: null });
  });

  it('claims an attempt with every field as a read by its session finds it', async () => {
    // Each field a value no other field has, so a column read into the wrong field shows.
    await h.store.insertAttempt(
      attempt(1, {
        serviceUserRef: 'vkd1_bound',
        clientId: 'client-1',
        destination: '+15550100009',
        returnTo: '/back',
        platform: 'mobile',
        createdAt: 1_100_000,
        nextCheckAt: 1_200_000,
      }),
    );
    const stored = await h.store.findAttemptBySessionId('session-1');
    const claimed = await h.store.claimDueAttempts({
      now: 2_000_000,
      owner: 'o',
      limit: 10,
      leaseMs: 60_000,
      maxAgeMs: 24 * HOUR,
    });
    expect(claimed).toHaveLength(1);
    // The read by session adds what only it shows (redactedAt, outcomeSource): every claimed field is the stored one.
    expect(stored).toMatchObject({ ...claimed[0] });
  });

  it('refuses a second attempt with the same state or the same sessionId, keeping the first', async () => {
    await h.store.insertAttempt(attempt(1));
    const duplicate = /unique|duplicate key/i;
    await expect(h.store.insertAttempt(attempt(2, { state: 'state-1' }))).rejects.toThrow(duplicate);
    await expect(h.store.insertAttempt(attempt(2, { sessionId: 'session-1' }))).rejects.toThrow(duplicate);
    expect((await h.store.findAttemptByState('state-1'))?.userRef).toBe('user-1');
    expect(await h.store.findAttemptByState('state-2')).toBeUndefined();
  });

  // The contract holds for each ordering; a store may mark them differently (PostgreSQL marks an
  // attempt ordered 'latest' alone in a routine that takes its pair's lock, an 'independent' one in a plain UPDATE).
  describe.each(['latest', 'independent'] as const)('fulfilOnce with ordering %s', (ordering) => {
    const options = { ordering };

    it('runs the effect and the mark once: the second caller is told it was already fulfilled', async () => {
      await h.store.insertAttempt(attempt(1));
      const first = await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), h.effect(), 5, options);
      const second = await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), h.effect(), 6, options);
      expect(first.kind).toBe('fulfilled');
      expect(second.kind).toBe('already_fulfilled');
      expect(await h.countEffects()).toBe(1);
      const stored = await h.store.findAttemptByState('state-1');
      expect(stored).toMatchObject({ outcome: 'fulfilled', fulfilledAt: 5, finishedAt: 5 });
    });

    it('runs the effect once when twenty callers in one process fulfil the same session at the same moment', async () => {
      await h.store.insertAttempt(attempt(1));
      const stored = await storedAttempt(h.store, 'session-1');
      const callers = Array.from({ length: 20 }, (_, i) => fulfilOnce(h.store, stored, h.effect(), 10 + i, options));
      const results = await Promise.all(callers);
      expect(results.filter((r) => r.kind === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'already_fulfilled')).toHaveLength(19);
      expect(await h.countEffects()).toBe(1);
    });

    it('rolls back the effect and leaves the attempt pending when the effect throws', async () => {
      await h.store.insertAttempt(attempt(1));
      const failing = h.effect('test', () => {
        throw new Error('payout provider down');
      });
      await expect(fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), failing, 5, options)).rejects.toThrow(
        'payout provider down',
      );
      expect(await h.countEffects()).toBe(0);
      expect(await h.store.findAttemptByState('state-1')).toMatchObject({ outcome: 'pending', fulfilledAt: null });
      expect((await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), h.effect(), 6, options)).kind).toBe(
        'fulfilled',
      );
      expect(await h.countEffects()).toBe(1);
    });

    it('rolls back when the effect throws a value instanceof cannot read (a revoked Proxy): no later commit marks it', async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      const failing = h.effect('test', () => {
        throw proxy;
      });
      await expect(fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), failing, 5, options)).rejects.toBe(
        proxy,
      );
      // The next fulfilment takes the connection the failed one released (PostgreSQL's pool reuses
      // the last one freed): had its transaction been left open, this commit would mark attempt 1.
      expect((await fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), h.effect(), 6, options)).kind).toBe(
        'fulfilled',
      );
      expect(await h.store.findAttemptByState('state-1')).toMatchObject({ outcome: 'pending', fulfilledAt: null });
      expect(await h.countEffects()).toBe(1);
    });

    it('never fulfils a failed, expired or unknown attempt, and never turns a fulfilled one into failed', async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      await h.store.recordFailure('session-1', 'otp_locked', 5);
      const ran: string[] = [];
      expect(
        (await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), () => void ran.push('1'), 6, options))
          .kind,
      ).toBe('not_pending');
      expect(
        (
          await fulfilOnce(
            h.store,
            await storedAttempt(h.store, 'session-unknown'),
            () => void ran.push('u'),
            6,
            options,
          )
        ).kind,
      ).toBe('not_pending');
      await fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), () => {}, 7, options);
      await h.store.recordFailure('session-2', 'device_changed', 8);
      expect(ran).toEqual([]);
      const failed = await h.store.findAttemptByState('state-1');
      expect(failed).toMatchObject({ outcome: 'failed', failureReason: 'otp_locked', finishedAt: 5 });
      expect(await h.store.findAttemptByState('state-2')).toMatchObject({ outcome: 'fulfilled', failureReason: null });
    });
  });

  it('fulfils each attempt exactly once when four processes race on the same database', async () => {
    const sessionIds = Array.from({ length: 40 }, (_, i) => `session-${i}`);
    for (let i = 0; i < sessionIds.length; i++) await h.store.insertAttempt(attempt(i));
    const processes = Array.from({ length: 4 }, () =>
      fork(racerOnBuiltStores('fulfil-racer.mjs'), [h.spec, ...sessionIds], { execArgv: [] }),
    );
    const ready = processes.map((racer) => new Promise((resolve) => racer.once('message', resolve)));
    interface RacerReport {
      ran: number;
      results: Record<string, number>;
      lost: number;
    }
    const reports = processes.map(
      (racer) =>
        new Promise<RacerReport>((resolve, reject) => {
          racer.on('message', (message) => typeof message === 'object' && resolve(message as RacerReport));
          racer.once('exit', (code) => code !== 0 && reject(new Error(`racer exited with ${code}`)));
        }),
    );
    await Promise.all(ready);
    for (const racer of processes) racer.send('go');
    const racers = await Promise.all(reports);
    const ranPerRacer = racers.map((r) => r.ran);
    expect(ranPerRacer.reduce((a, b) => a + b, 0)).toBe(sessionIds.length);
    expect(await h.countEffects()).toBe(sessionIds.length);
    expect(await h.duplicateEffects()).toEqual([]);
    // The race really happened: every racer tried every attempt, and some racer lost an attempt it
    // had read as pending to another racer's commit (the interleaving exactly-once is about).
    for (const racer of racers) {
      expect(Object.values(racer.results).reduce((a, b) => a + b, 0)).toBe(sessionIds.length);
    }
    const lost = racers.map((r) => r.lost);
    console.info(
      `four-process race: effects per racer ${ranPerRacer.join(', ')}; lost after reading pending ${lost.join(', ')}`,
    );
    expect(
      lost.reduce((a, b) => a + b, 0),
      `effects per racer: ${ranPerRacer.join(', ')}; lost after reading pending: ${lost.join(', ')}`,
    ).toBeGreaterThan(0);
  });

  describe('sweep claims', () => {
    const claim = (owner: string, now: number, limit = 10) =>
      h.store.claimDueAttempts({ now, owner, limit, leaseMs: 60_000, maxAgeMs: 24 * HOUR });

    it('gives each due attempt to one owner at a time, and back to anyone once the lease expires', async () => {
      for (let i = 0; i < 5; i++) await h.store.insertAttempt(attempt(i));
      const a = await claim('a', 2_000_000, 3);
      const b = await claim('b', 2_000_000, 10);
      expect(a).toHaveLength(3);
      expect(b).toHaveLength(2);
      expect(new Set([...a, ...b].map((x) => x.state)).size).toBe(5);
      expect(await h.lease('session-0')).toEqual({ owner: expect.stringMatching(/^[ab]$/), until: 2_060_000 });
      expect(await claim('c', 2_000_000 + 59_000)).toHaveLength(0);
      expect(await claim('c', 2_000_000 + 60_000)).toHaveLength(5);
    });

    it('hands out the most overdue attempts first', async () => {
      await h.store.insertAttempt(attempt(1, { nextCheckAt: 1_500_000 }));
      await h.store.insertAttempt(attempt(2, { nextCheckAt: 1_100_000 }));
      await h.store.insertAttempt(attempt(3, { nextCheckAt: 1_300_000 }));
      expect((await claim('a', 2_000_000, 2)).map((x) => x.state)).toEqual(['state-2', 'state-3']);
    });

    it('gives disjoint batches to claims made at the same moment', async () => {
      for (let i = 0; i < 30; i++) await h.store.insertAttempt(attempt(i));
      const batches = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((owner) => claim(owner, 2_000_000, 5)));
      const states = batches.flat().map((x) => x.state);
      expect(states).toHaveLength(30);
      expect(new Set(states).size).toBe(30);
    });

    it('skips attempts not yet due, settled ones, and ones older than the 24 h window', async () => {
      await h.store.insertAttempt(attempt(1, { nextCheckAt: 3_000_000 }));
      await h.store.insertAttempt(attempt(2));
      await h.store.insertAttempt(attempt(3));
      await h.store.insertAttempt(attempt(4, { createdAt: 2_000_000 - 24 * HOUR }));
      await h.store.insertAttempt(attempt(5, { userRef: 'user-elsewhere' }));
      await h.store.recordFailure('session-3', 'otp_locked', 5);
      await fulfilOnce(h.store, await storedAttempt(h.store, 'session-5'), h.effect(), 5);
      expect((await claim('a', 2_000_000)).map((x) => x.state)).toEqual(['state-2']);
    });

    it('claims only the platform asked for, so a web kit and a mobile kit sharing a store each sweep their own', async () => {
      await h.store.insertAttempt(attempt(1, { platform: 'web' }));
      await h.store.insertAttempt(attempt(2, { platform: 'mobile' }));
      const options = { now: 2_000_000, limit: 10, leaseMs: 60_000, maxAgeMs: 24 * HOUR };
      const mobile = await h.store.claimDueAttempts({ ...options, owner: 'm', platform: 'mobile' });
      const web = await h.store.claimDueAttempts({ ...options, owner: 'w', platform: 'web' });
      expect(mobile.map((x) => x.state)).toEqual(['state-2']);
      expect(web.map((x) => x.state)).toEqual(['state-1']);
    });

    it('keeps the client id each attempt was started with through a claim, a restart and every read (null when none was)', async () => {
      await h.store.insertAttempt(attempt(1, { clientId: 'client-old' }));
      await h.store.insertAttempt(attempt(2, { clientId: 'client-new' }));
      await h.store.insertAttempt(attempt(3)); // stored before the kit recorded client ids
      const claimed = await h.store.claimDueAttempts({
        now: 2_000_000,
        limit: 10,
        leaseMs: 60_000,
        maxAgeMs: 24 * HOUR,
        owner: 'o',
      });
      expect(claimed.map((x) => [x.state, x.clientId]).sort()).toEqual([
        ['state-1', 'client-old'],
        ['state-2', 'client-new'],
        ['state-3', null],
      ]);
      await h.reopen();
      expect(await h.store.findAttemptByState('state-1')).toMatchObject({ clientId: 'client-old' });
      expect(await h.store.findAttemptBySessionId('session-2')).toMatchObject({ clientId: 'client-new' });
      expect(await h.store.findAttemptByState('state-3')).toMatchObject({ clientId: null });
    });

    it('reschedules only for the owner of the claim, and releases claims on request', async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      await claim('a', 2_000_000);
      await scheduleNextCheck(h.store, 'session-1', 'not-the-owner', 9_000_000);
      expect((await h.store.findAttemptByState('state-1'))?.nextCheckAt).toBe(1_000_000);
      await scheduleNextCheck(h.store, 'session-1', 'a', 9_000_000);
      expect(await h.store.findAttemptByState('state-1')).toMatchObject({ nextCheckAt: 9_000_000, sweepChecks: 1 });
      expect(await h.lease('session-1')).toEqual({ owner: null, until: null });
      expect(await h.store.releaseClaims('a')).toBe(1);
      expect((await claim('b', 2_000_000)).map((x) => x.state)).toEqual(['state-2']);
    });

    it('expires attempts past 24 h unless a live claim holds them', async () => {
      const now = 1_000_000 + 24 * HOUR;
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      await h.store.insertAttempt(attempt(3, { createdAt: now - HOUR }));
      const claim = { now: now - 1, owner: 'a', limit: 1, leaseMs: 60_000, maxAgeMs: 25 * HOUR };
      const [held] = await h.store.claimDueAttempts(claim);
      const free = held!.state === 'state-1' ? attempt(2) : attempt(1);
      expect(await h.store.expireAttempts(now, 24 * HOUR)).toBe(1);
      expect(await h.store.findAttemptByState(free.state)).toMatchObject({ outcome: 'expired', finishedAt: now });
      expect((await h.store.findAttemptByState(held!.state))?.outcome).toBe('pending');
      expect(await h.store.expireAttempts(now + 60_000, 24 * HOUR)).toBe(1);
      expect((await h.store.findAttemptByState('state-3'))?.outcome).toBe('pending');
      expect((await fulfilOnce(h.store, await storedAttempt(h.store, free.sessionId), h.effect(), now + 1)).kind).toBe(
        'not_pending',
      );
    });
  });

  describe('step-up', () => {
    const stepUp = () => h.store.stepUp as StepUpStore;
    const keep = (kept: NewStepUpIntent, maxLive = 20) => stepUp().insertIntent(kept, maxLive);

    /** A grant written as the kit writes one: by its attempt's landing, once the attempt was fulfilled. */
    async function grantFrom(n: number, grant: Pick<StepUpGrant, 'userRef' | 'scope' | 'startedAt'>): Promise<void> {
      await h.store.insertAttempt(attempt(n, { userRef: grant.userRef, action: grant.scope }));
      expect((await fulfilOnce(h.store, await storedAttempt(h.store, `session-${n}`), () => {}, 9_000_000)).kind).toBe(
        'fulfilled',
      );
      const written = { sessionId: `session-${n}`, resourceKey: '', browserSession: 'browser-1', grantedAt: 9_000_000 };
      await stepUp().insertGrant({ ...grant, ...written });
    }
    const listed = async (userRef: string, scope?: string) =>
      (await stepUp().listGrants({ userRef, ...(scope === undefined ? {} : { scope }), limit: 50 })).map(
        (g) => g.sessionId,
      );

    it('consuming a kept form clears its stored fields, and only the one caller that consumed it gets them', async () => {
      await keep(intent(1));
      const now = 1_000_000 + 60_000;
      const consumers = await Promise.all(Array.from({ length: 5 }, () => stepUp().consumeIntent('intent-1', now)));
      const winners = consumers.filter((c) => c !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ intentId: 'intent-1', fields: { iban: 'IBAN-SECRET-1' }, consumedAt: now });
      // The handler ran with them: the store keeps none of them, and nobody gets them again.
      expect(await stepUp().findIntent('intent-1')).toMatchObject({ consumedAt: now, fields: null });
      expect(JSON.stringify(await h.query('SELECT fields FROM verify_kit_intents'))).not.toContain('IBAN-SECRET');
      expect(await stepUp().consumeIntent('intent-1', now + 1)).toBeUndefined();
    });

    it('purges expired kept forms, consumed or not, a batch at a time, and keeps the live ones', async () => {
      const expiresAt = 1_000_000 + 15 * 60_000;
      await keep(intent(1));
      await keep(intent(2));
      await keep(intent(3, { expiresAt: expiresAt + 60_000 }));
      await stepUp().consumeIntent('intent-2', expiresAt - 1);
      const purge = () => stepUp().purgeExpiredIntents({ now: expiresAt, limit: 1 });
      expect([await purge(), await purge(), await purge()]).toEqual([1, 1, 0]);
      expect(await stepUp().findIntent('intent-1')).toBeUndefined();
      expect(await stepUp().findIntent('intent-2')).toBeUndefined();
      expect(await stepUp().findIntent('intent-3')).toMatchObject({ fields: { iban: 'IBAN-SECRET-3' } });
    });

    it('keeps at most maxLive live intents per user: beyond it nothing is stored and none already kept is lost', async () => {
      const ofAlice = (n: number, overrides: Partial<NewStepUpIntent> = {}) =>
        intent(n, { userRef: 'user-alice', ...overrides });
      for (let n = 1; n <= 3; n++) expect(await keep(ofAlice(n), 3)).toBe(true);
      expect(await keep(ofAlice(4), 3)).toBe(false);
      expect(await stepUp().findIntent('intent-4')).toBeUndefined();
      for (let n = 1; n <= 3; n++) expect(await stepUp().findIntent(`intent-${n}`)).toMatchObject({ consumedAt: null });
      // Another user is not held back; a consumed or expired intent no longer counts.
      expect(await keep(intent(5, { userRef: 'user-bob' }), 3)).toBe(true);
      await stepUp().consumeIntent('intent-1', 1_000_001);
      expect(await keep(ofAlice(6), 3)).toBe(true);
      expect(await keep(ofAlice(7), 3)).toBe(false);
      const later = 1_000_000 + 15 * 60_000;
      expect(await keep(ofAlice(8, { createdAt: later, expiresAt: later + 15 * 60_000 }), 3)).toBe(true);
    });

    it('keeps exactly maxLive live intents of a user when 200 keeps race on four instances (40 connections)', async () => {
      const others = await Promise.all([1, 2, 3].map(() => h.openAnother()));
      const instances = [h.store, ...others].map((store) => store.stepUp as StepUpStore);
      const kept = await Promise.all(
        Array.from({ length: 200 }, (_, n) =>
          instances[n % instances.length]!.insertIntent(intent(100 + n, { userRef: 'user-burst' }), 20),
        ),
      );
      expect(kept.filter((stored) => stored)).toHaveLength(20);
      const [row] = await h.query<{ n: number }>(
        "SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = 'user-burst'",
      );
      expect(Number(row!.n)).toBe(20);
    });

    it("finds a browser session's grant for its scope and resource within its age, however many newer grants the user holds elsewhere", async () => {
      const grant = (n: number, overrides: Partial<StepUpGrant>): StepUpGrant => ({
        sessionId: `session-${n}`,
        userRef: 'user-alice',
        scope: 'payout',
        resourceKey: 'acct-1',
        browserSession: 'browser-1',
        startedAt: 1_000,
        grantedAt: 1_100,
        ...overrides,
      });
      await stepUp().insertGrant(grant(1, {}));
      // Newer grants of the same user and scope: 60 in other browser sessions, 60 for other resources.
      for (let n = 1; n <= 60; n++) {
        await stepUp().insertGrant(grant(100 + n, { browserSession: `browser-other-${n}`, startedAt: 2_000 + n }));
        await stepUp().insertGrant(grant(200 + n, { resourceKey: `acct-other-${n}`, startedAt: 3_000 + n }));
      }
      await stepUp().insertGrant(grant(2, { scope: 'security', startedAt: 4_000 }));
      const found = (query: { scope?: string; resourceKey?: string; startedSince?: number; grantedSince?: number }) =>
        stepUp()
          .listGrants({ userRef: 'user-alice', scope: 'payout', browserSession: 'browser-1', limit: 1, ...query })
          .then((grants) => grants.map((g) => g.sessionId));
      expect(await found({ resourceKey: 'acct-1', startedSince: 1_000 })).toEqual(['session-1']);
      // Too old for the age asked, or of another resource: none; another scope has its own.
      expect(await found({ resourceKey: 'acct-1', startedSince: 1_001 })).toEqual([]);
      expect(await found({ scope: 'security', resourceKey: 'acct-1' })).toEqual(['session-2']);
      expect(await found({ resourceKey: 'acct-2' })).toEqual([]);
      // Granted since a time (any resource of this browser session): the newest such.
      expect(await found({ grantedSince: 1_100 })).toEqual(['session-260']);
      expect(await found({ grantedSince: 9_999 })).toEqual([]);
      // A revocation hides it from the filtered read too.
      await stepUp().revokeGrants({ userRef: 'user-alice', scope: 'payout', now: 1_500 });
      expect(await found({ resourceKey: 'acct-1' })).toEqual([]);
    });

    it('a revocation hides every grant started at or before it, even one a verification in flight writes afterwards', async () => {
      await grantFrom(1, { userRef: 'user-alice', scope: 'security', startedAt: 1_000 });
      await grantFrom(2, { userRef: 'user-alice', scope: 'export', startedAt: 1_000 });
      await grantFrom(3, { userRef: 'user-bob', scope: 'security', startedAt: 1_000 });
      expect(await stepUp().revokeGrants({ userRef: 'user-alice', scope: 'security', now: 2_000 })).toBe(1);
      // Started at or before the revocation, fulfilled after it (a landing or the sweep): never listed.
      await grantFrom(4, { userRef: 'user-alice', scope: 'security', startedAt: 2_000 });
      expect(await listed('user-alice')).toEqual(['session-2']);
      await grantFrom(5, { userRef: 'user-alice', scope: 'security', startedAt: 2_001 });
      expect(await listed('user-alice', 'security')).toEqual(['session-5']);
      expect(await listed('user-bob')).toEqual(['session-3']);
      // Without a scope: every scope of the user, through a restart.
      expect(await stepUp().revokeGrants({ userRef: 'user-alice', now: 3_000 })).toBe(2);
      await grantFrom(6, { userRef: 'user-alice', scope: 'export', startedAt: 2_500 });
      await h.reopen();
      expect(await listed('user-alice')).toEqual([]);
      await grantFrom(7, { userRef: 'user-alice', scope: 'export', startedAt: 3_001 });
      expect(await listed('user-alice')).toEqual(['session-7']);
      // A revocation timed earlier than the last one (another instance's clock) never brings a grant back.
      await stepUp().revokeGrants({ userRef: 'user-bob', scope: 'security', now: 5_000 });
      await stepUp().revokeGrants({ userRef: 'user-bob', scope: 'security', now: 4_000 });
      await grantFrom(8, { userRef: 'user-bob', scope: 'security', startedAt: 4_500 });
      expect(await listed('user-bob')).toEqual([]);
    });
  });

  describe('schema', () => {
    it('migrates again when another instance opens the same database, keeping the kit rows', async () => {
      await h.store.insertAttempt(attempt(1));
      const again = await h.openAnother();
      expect(await again.findAttemptByState('state-1')).toMatchObject({ sessionId: 'session-1' });
      await again.insertAttempt(attempt(2));
      expect(await h.store.findAttemptByState('state-2')).toMatchObject({ sessionId: 'session-2' });
    });

    it('refuses a newer database that does not say which kit versions may use it, instead of guessing', async () => {
      await h.exec('UPDATE verify_kit_schema SET version = 99');
      await h.exec('ALTER TABLE verify_kit_schema DROP COLUMN oldest_usable_version');
      await expect(h.openAnother()).rejects.toThrow(/newer than this kit's \d+: upgrade the kit/);
    });

    // A rolling deploy or a rollback: an instance of the previous kit restarts on a database this
    // kit migrated. On both stores this kit's two newest migrations only add indexes.
    it('lets an older kit start and fulfil on a database a newer kit migrated with additive migrations only, changing nothing', async () => {
      const schemaRow = 'SELECT version FROM verify_kit_schema';
      await h.store.insertAttempt(attempt(1));
      await h.startOlderKit(h.schemaVersion - 2);
      expect(await h.query(schemaRow)).toEqual([{ version: h.schemaVersion }]);
      const older = await h.openAnother();
      const fulfilled = await fulfilOnce(older, await storedAttempt(older, 'session-1'), h.effect('older'), 5);
      expect(fulfilled.kind).toBe('fulfilled');
      expect(await h.effectsBy()).toEqual({ older: 1 });
      // Several older instances restarting at once all start.
      const older2 = Array.from({ length: 4 }, () => h.startOlderKit(h.schemaVersion - 2));
      await expect(Promise.all(older2)).resolves.toHaveLength(4);
    });

    it('refuses an older kit rolled back past a breaking migration, naming the schema version it needs, and changes nothing', async () => {
      type Row = { version: number; oldest_usable_version: number };
      const schemaRow = 'SELECT version, oldest_usable_version FROM verify_kit_schema';
      const [stored] = await h.query<Row>(schemaRow);
      // The last breaking migration on both stores binds the service userRef to the number (5 on
      // PostgreSQL, 6 on SQLite): a kit before it refuses such attempts.
      const needed = stored!.oldest_usable_version;
      expect(needed).toBe(h.kind === 'postgres' ? 5 : 6);
      await expect(h.startOlderKit(needed - 1)).rejects.toThrow(
        `schema is version ${h.schemaVersion}, and its migration ${needed} changed what code before it relies on, ` +
          `so only a kit whose ${h.kind === 'postgres' ? 'PostgreSQL' : 'SQLite'} schema is version ${needed} or newer ` +
          `may use it; this kit's is ${needed - 1} (rolled back past that breaking change)`,
      );
      await h.startOlderKit(needed);
      expect(await h.query<Row>(schemaRow)).toEqual([stored]);
      await h.store.insertAttempt(attempt(1));
      expect(await h.store.findAttemptByState('state-1')).toMatchObject({ sessionId: 'session-1' });
    });
  });
});
