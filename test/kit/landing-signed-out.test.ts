/**
 * A landing still working when its user signs out never brings the signed-out session back, on
 * SQLite and on PostgreSQL (express-session's memory store, as an app gets it from the package
 * alone): the old cookie opens nothing afterwards, and the landing answers as to a signed-out browser.
 */
import type express from 'express';
import { MemoryStore, type SessionData } from 'express-session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';
import { waitFor } from '../support/wait-for.ts';

describeEachAppStore('a landing in flight at sign-out', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions, (a) => {
    // Sign-out as apps write it: the session is destroyed in its store.
    a.post('/own/sign-out', (req: express.Request, res) => {
      req.session.destroy(() => res.json({ signedOut: true }));
    });
  });

  it('the session destroyed while the landing read the service stays destroyed: the old cookie opens nothing', async () => {
    const user = await suite.app.agent().signIn('signed-out-mid-landing');
    const form = confirmForm((await user.request('/security')).body);
    const started = await user.start(form.action, { intent: form.intent });
    const location = await user.verifyOnHostedPage(started);
    const { control } = suite.app.emulator;
    const readsBefore = (await control.stats()).statusReads;
    await control.injectFaults({ statusDelayMs: 800 });
    let landed;
    try {
      const landing = user.request(location);
      // The landing has loaded the session and is waiting for the service's answer: sign out now.
      await waitFor(async () => (await control.stats()).statusReads > readsBefore, 5_000, 'the landing’s read');
      expect((await user.request('/own/sign-out', { method: 'POST' })).status).toBe(200);
      landed = await landing;
      expect(await suite.app.kit.attempts.get(started.sessionId)).toMatchObject({ outcome: 'fulfilled' });
    } finally {
      await control.injectFaults({ statusDelayMs: 0 });
    }
    // The cookie from before the sign-out.
    const after = await user.request('/security');
    expect(after.body).not.toContain('codes for signed-out-mid-landing');
    expect(after.status).toBe(401);
    expect(suite.ran.filter((r) => r.user === 'signed-out-mid-landing')).toEqual([]);
    // The landing answered as to a signed-out browser: no redirect into the guarded page.
    expect(landed.status).toBe(200);
  });
});

describe('a landing whose session store stops answering', () => {
  /** express-session's memory store, whose reads hang once told to (a store that lost its database). */
  class HangingStore extends MemoryStore {
    hang = false;
    override get(sid: string, done: (error: unknown, session?: SessionData | null) => void): void {
      if (!this.hang) super.get(sid, done);
    }
  }
  let app: TestApp | undefined;
  const store = new HangingStore();
  beforeAll(async () => {
    app = await startTestApp({
      session: { store, secret: 'hanging-store' },
      kit: { hookTimeouts: { resolveUser: 300 } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers the kit’s error page within hookTimeouts.resolveUser, and the app goes on serving', async () => {
    const user = await app!.agent().signIn('hanging-session-store');
    const started = await user.start('grant');
    const location = await user.verifyOnHostedPage(started);
    const { control } = app!.emulator;
    const readsBefore = (await control.stats()).statusReads;
    await control.injectFaults({ statusDelayMs: 500 });
    let landed;
    try {
      const landing = user.request(location);
      // express-session has loaded the session and the landing reads the service: the store hangs from now on.
      await waitFor(async () => (await control.stats()).statusReads > readsBefore, 5_000, 'the landing’s read');
      store.hang = true;
      landed = await landing;
    } finally {
      store.hang = false;
      await control.injectFaults({ statusDelayMs: 0 });
    }
    expect(landed.status).toBe(500);
    expect(landed.body).not.toMatch(/at .*\.ts:\d+/);
    expect((await user.request(location)).status).toBeLessThan(500);
  });
});
