/**
 * A KitError a ready client (`client: yourClient`, the app's code) throws is in the integrator's
 * words and may name the number it was asked to text ("no route for +15550001111"): the start's,
 * the landing's and the sweep's log lines have it masked, as any other error of the integrator's
 * code, on SQLite and PostgreSQL. The user's answer is the kit's page for its code, as before.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { KitError, KitErrorCode, type VerifyClient } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';

const alice = USERS.alice!;
describeEachAppStore("a ready client's KitError naming the number", (_store, storeOptions) => {
  let failReads = false;

  let app: TestApp;
  const seen = newSeen();
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapClient: (real): VerifyClient => ({
        createSession: (input, key) =>
          input.destination === alice.destination && !failReads
            ? Promise.reject(new KitError(KitErrorCode.ServiceRejected, `no route for ${input.destination}`))
            : real.createSession(input, key),
        getSession: (sessionId) => {
          if (failReads) throw new KitError(KitErrorCode.ServiceUnavailable, `no route for ${alice.destination}`);
          return real.getSession(sessionId);
        },
        close: () => real.close(),
      }),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The messages of the route's lines that quote the client's error. */
  const logged = (route: string) =>
    app.logs
      .map((line) => JSON.parse(line) as { route?: string; msg?: string })
      .filter((line) => line.route === route && line.msg?.startsWith('no route') === true)
      .map((line) => line.msg);

  it("a ready client's KitError naming the number at the start: the kit's page, logged masked", async () => {
    const user = await app.agent(seen).signIn('alice');
    const answer = await user.tryStart('grant_badge');
    expect(answer.status).toBe(502);
    expect(answer.body).not.toContain('no route');
    expect(logged('start')).toEqual(['no route for ••\u00a011']);
    for (const line of app.logs) expect(line).not.toContain(alice.destination.slice(2));
  });

  it("a ready client's KitError naming the number at the landing's and the sweep's read: logged masked", async () => {
    const user = await app.agent(seen).signIn('bob');
    await user.start('grant_badge');
    const row = await app.latestAttempt();
    await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });
    failReads = true;
    const landed = await user.landFor(row.sessionId, row.state);
    failReads = false;
    expect(landed.status).toBeGreaterThanOrEqual(500);
    expect(await landed.text()).not.toContain('no route');
    expect(logged('landing')).toEqual(['no route for ••\u00a011']);

    failReads = true;
    const report = await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 }, { owner: 'masked' });
    failReads = false;
    expect(report.errors).toBe(1);
    const swept = app.logs
      .map((line) => JSON.parse(line) as { sessionId?: string; err?: { message?: string } })
      .filter((line) => line.sessionId === row.sessionId && line.err?.message?.startsWith('no route') === true);
    expect(swept.map((line) => line.err?.message)).toEqual(['no route for ••\u00a011']);
    for (const line of app.logs) expect(line).not.toContain(alice.destination.slice(2));
  });
});
