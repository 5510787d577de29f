/**
 * The app's `locale` chooser that rejects or throws a value no one can look at (a revoked Proxy,
 * as a membrane may hand back: `instanceof` and property reads throw) is logged and English is
 * used, as for an Error: the start is answered 200 and no rejection is left unhandled (which ends a
 * production process). The kit's handler of such a failure threw on the value itself: a rejected
 * promise was left unhandled, a synchronous throw failed the start with a 500.
 */
import { afterEach, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

const seen = newSeen();
let app: TestApp | undefined;
const unhandled: unknown[] = [];
const collect = (reason: unknown) => void unhandled.push(reason);
afterEach(async () => {
  process.off('unhandledRejection', collect);
  await app?.close();
  app = undefined;
});

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

it('a locale returning a promise rejected with a revoked Proxy: the start is answered, nothing unhandled', async () => {
  unhandled.length = 0;
  process.on('unhandledRejection', collect);
  app = await startTestApp({
    kit: { locale: (() => Promise.reject(revokedProxy())) as unknown as () => string },
  });
  const alice = await app.agent(seen).signIn('alice');
  const answer = await alice.tryStart('grant_badge', {}, 3_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect({ status: answer.status, unhandled: unhandled.length }).toEqual({ status: 200, unhandled: 0 });
});

it('a locale throwing a revoked Proxy: English is used and the start goes on, as for a thrown Error', async () => {
  app = await startTestApp({
    kit: {
      locale: () => {
        throw revokedProxy();
      },
    },
  });
  const alice = await app.agent(seen).signIn('alice');
  const answer = await alice.tryStart('grant_badge', {}, 3_000);
  expect(answer.status).toBe(200);
});
