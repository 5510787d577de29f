/**
 * The landing never redirects off-site to the path stored at the attempt's start: for an action
 * with a fixed successPath, the 303 went to the attempt's `returnTo` exactly as the store answered
 * it (a store of the app's own, a row another kit wrote on a shared database), while a successPath
 * function's answer was checked. Now both are sent on only as a same-origin path. On SQLite and
 * PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import type { Attempt } from '../../middleware/store/types.ts';

const OFF_SITE = ['//evil.example/done', 'https://evil.example/done', '/\\evil.example/done'];

describeEachAppStore('the landing 303 to a stored returnTo the store answers', (_store, storeOptions) => {
  let app: TestApp | undefined;
  let answered: string | undefined;
  const withReturnTo = (attempt: Attempt | undefined) =>
    attempt === undefined || answered === undefined ? attempt : { ...attempt, returnTo: answered };
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, name, receiver) {
            if (name === 'findAttemptByState') {
              return async (state: string) => withReturnTo(await target.findAttemptByState(state));
            }
            if (name === 'findAttemptBySessionId') {
              return async (id: string) => withReturnTo(await target.findAttemptBySessionId(id));
            }
            const value = Reflect.get(target, name, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each(OFF_SITE)('a returnTo answered as %j is never the Location of the landing', async (path) => {
    answered = undefined;
    const user = await app!.agent().signIn(`stored-return-to-${OFF_SITE.indexOf(path)}`);
    const started = await user.start('grant');
    await app!.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    answered = path;
    const landed = await user.landFor(started.sessionId, started.state);
    answered = undefined;
    expect(landed.location ?? '', `landing ${landed.status}`).not.toContain('evil.example');
  });
});
