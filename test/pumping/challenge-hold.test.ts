/**
 * A challenge an attacker passes does not reopen a key an attack keeps pressing on, on SQLite and
 * PostgreSQL: a start let through by the app's challenge counts under the keys that tripped as a
 * refused one does, and once those starts reach three times the key's hourly threshold in the last
 * hour the key is held, and a held key's start is refused even when its challenge passes (a solving
 * service passes most CAPTCHAs for a fraction of a cent). Nothing is sent for it; the page is the
 * same 429 as any refusal.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

/** Kenyan mobiles, each in a block of its own (so only the country's rules are in play). */
const kenyan = (n: number) => `+2547${String(10 + n).padStart(2, '0')}000001`;
/** The country's hourly threshold with no history: max(3, 20 / 6). */
const HOURLY = 20 / 6;

describeEachAppStore('a challenge passed on a held key', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        pumping: {
          mode: 'refuse',
          // Every agent is 127.0.0.1: the address rules out of the way.
          thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
          // The attacker's solving service: every challenge passes.
          challenge: { verify: (req) => (req.body as Record<string, unknown>).captcha === 'solved' },
        },
        limits: GENEROUS_START_LIMITS,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const startTo = async (phone: string) => {
    const user = await app.agent().signIn(`someone-${phone}`);
    return user.tryStartWithNumber('add_phone', phone, { captcha: 'solved' });
  };

  it('challenged starts press on the key as refused ones do, and a held key refuses a start whose challenge passed', async () => {
    const at = (Math.floor(Date.now() / 3_600_000) + 1) * 3_600_000 + 5 * 60_000;
    await app.clock.pinned(at, async () => {
      // Four texts trip the country's hourly rule; the challenge lets the next ones through until
      // they reach three times its hourly threshold (10): the key is held from then on.
      const pressing = 4 + Math.ceil(3 * HOURLY);
      for (let n = 0; n < pressing; n++) expect((await startTo(kenyan(n))).status, `start ${n}`).toBe(200);
      const sent = (await app.emulator.control.outbox()).length;
      const held = await startTo(kenyan(pressing));
      expect(held.status).toBe(429);
      expect(held.headers.get('retry-after')).toBe('3600');
      expect((await app.emulator.control.outbox()).length).toBe(sent);
      const decisions = await app.store.pumping!.listDecisions({ since: at, limit: 20 });
      expect(decisions[0]).toMatchObject({ decision: 'refused', country: 'KE' });
      expect(decisions[0]!.reasons).toContain('country_held');
      expect(decisions.slice(1).map((d) => d.decision)).toEqual(Array(pressing - 4).fill('challenged'));
    });
  });
});
