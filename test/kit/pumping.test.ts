/**
 * The SMS pumping rules through the start route, on SQLite and PostgreSQL: texts never verified,
 * counted per phone country, number block and client address, refuse the next start past their
 * thresholds (nothing sent, no budget spent, the same 429 as a spent budget); verified texts, which
 * the kit learns at the landing, raise a country's thresholds; one attacked block leaves the rest of
 * its country open; one address texting many countries is refused; two instances on one database
 * share the counters; record mode warns and sends; the allow-list and the app's challenge let a
 * start through, a challenge that throws, hangs or answers anything but true counts as failed; an
 * operator's block refuses in every mode and past any challenge; a refusal counts under the keys
 * that refused it; the address rules hold back even a user who verified before; the purge a start
 * runs keeps the 14 days the thresholds read back; a number the app keeps counts
 * under its own country as a typed one does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ActionDefinition, PumpingOptions } from '../../middleware/index.ts';
import { describeEachAppStore, type StoreOptions } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Answer } from '../support/agent.ts';
import { contextOf } from '../../middleware/create-kit.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { waitFor } from '../support/wait-for.ts';
import { addPhoneAction } from '../support/actions.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Each test runs on its own day, so no two share a window; ten minutes into an hour. */
const BASE = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
const dayOf = (n: number) => BASE + n * 2 * DAY;

const addPhone = addPhoneAction();

/** An app whose address rules are out of the way unless a test is about them (every agent is 127.0.0.1). */
async function pumpingApp(storeOptions: Awaited<ReturnType<StoreOptions>>, pumping: PumpingOptions) {
  return startTestApp({
    ...storeOptions,
    kit: {
      actions: [addPhone],
      pumping: {
        ...pumping,
        thresholds: { address: { dailyFloor: 1000, hourlyFloor: 1000 }, ...pumping.thresholds },
      },
      hookTimeouts: { challenge: 300 },
    },
  });
}

/** A start by a user of its own (so no per-user budget is in play) to `phone`. */
async function startTo(app: TestApp, phone: string, extra: Record<string, string> = {}): Promise<Answer> {
  const user = await app.agent().signIn(`pumping-${phone}-${Math.random()}`);
  return user.tryStartWithNumber('add_phone', phone, extra);
}

/** Starts and verifies (the landing learns the outcome), as a real user does. */
async function verifiedStart(app: TestApp, phone: string): Promise<void> {
  const user = await app.agent().signIn(`verified-${phone}`);
  const started = await user.startWithNumber('add_phone', phone);
  await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
  expect((await user.landFor(started.sessionId, started.state)).status).toBe(303);
}

/** Nigerian mobiles, each in a block of its own. */
const NG = ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001', '+2348035000001'];

const texts = async (app: TestApp) => (await app.emulator.control.outbox()).length;
const budgetRows = async (app: TestApp) =>
  (await app.query<{ n: number | string }>('SELECT count(*) AS n FROM verify_kit_start_budgets')).map((r) =>
    Number(r.n),
  )[0];

describeEachAppStore('SMS pumping rules', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await pumpingApp(await storeOptions(), { mode: 'refuse' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('texts to one country never verified are refused past its hourly threshold: nothing sent, no budget spent, a 429 naming no rule', async () => {
    await app.clock.pinned(dayOf(0), async () => {
      // Numbers in different blocks: only the country's rule is in play. With no history its hourly
      // threshold is the daily floor's sixth (20 / 6): the fifth never-verified text is refused.
      for (const phone of NG.slice(0, 4)) expect((await startTo(app, phone)).status).toBe(200);
      const before = { texts: await texts(app), attempts: await app.attemptCount(), budgets: await budgetRows(app) };
      const refused = await startTo(app, NG[4]!);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3600');
      expect(refused.body).toContain('Too many verification attempts.');
      expect(refused.body).not.toMatch(/pumping|country|unverified|nigeria|\bNG\b/i);
      expect({ texts: await texts(app), attempts: await app.attemptCount(), budgets: await budgetRows(app) }).toEqual(
        before,
      );
      const [decision] = await app.store.pumping!.listDecisions({ since: dayOf(0), limit: 1 });
      expect(decision).toMatchObject({ decision: 'refused', reasons: ['country_hourly'], country: 'NG' });
      const line = app.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.pumping === 'refused');
      expect(line).toMatchObject({ level: 'warn', country: 'NG', destination: '••\u00a001' });
      expect(app.logs.join('\n')).not.toContain(NG[4]!.slice(1));
    });
  });

  it('verified texts raise the country thresholds, and an attacked block is refused while the rest of its country is not', async () => {
    await app.clock.pinned(dayOf(1), async () => {
      for (let n = 0; n < 10; n++) await verifiedStart(app, `+336110000${String(n).padStart(2, '0')}`);
      for (const phone of ['+33612345001', '+33612345002', '+33612345003']) {
        expect((await startTo(app, phone)).status).toBe(200);
      }
      // The block's fourth never-verified text is refused...
      expect((await startTo(app, '+33612345004')).status).toBe(429);
      const [decision] = await app.store.pumping!.listDecisions({ since: dayOf(1), limit: 1 });
      expect(decision).toMatchObject({ decision: 'refused', reasons: ['block_hourly'], block: '+33612345' });
      // The refusal counts under the block that refused it, not under the country, which did not.
      const reading = await app.store.pumping!.readPumping({
        keys: [
          { dimension: 'country', key: 'FR' },
          { dimension: 'block', key: '+33612345' },
        ],
        address: '127.0.0.1',
        hour: Math.floor(dayOf(1) / HOUR),
        now: dayOf(1),
      });
      expect(reading.counts.map((c) => c.refusedThisHour)).toEqual([0, 1]);
      // ...the country, whose users verify, still texts anyone else: 10 verified give it 5 unverified an hour.
      expect((await startTo(app, '+33698765432')).status).toBe(200);
      // A country with no history would refuse this fifth never-verified text (threshold 20 / 6).
      expect((await startTo(app, '+33687654321')).status).toBe(200);
    });
  });

  it('one address texting more than three countries without a verification is refused', async () => {
    await app.clock.pinned(dayOf(2), async () => {
      for (const phone of ['+923001234001', '+5511912345001', '+639171234001', '+8801712345001']) {
        expect((await startTo(app, phone)).status).toBe(200);
      }
      expect((await startTo(app, '+62812345001')).status).toBe(429);
      const [decision] = await app.store.pumping!.listDecisions({ since: dayOf(2), limit: 1 });
      expect(decision).toMatchObject({ decision: 'refused', reasons: ['address_countries'], address: '127.0.0.1' });
    });
  });

  it('a verification the sweep learns (nobody landed) counts as the landing would', async () => {
    const at = dayOf(8);
    const user = await app.agent().signIn('swept-de');
    const started = await app.clock.pinned(at, () => user.startWithNumber('add_phone', '+4915123456001'));
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    const read = async () =>
      (
        await app.store.pumping!.readPumping({
          keys: [{ dimension: 'country', key: 'DE' }],
          address: '127.0.0.1',
          hour: Math.floor(at / HOUR),
          now: at,
        })
      ).counts[0];
    expect(await read()).toMatchObject({ sentThisHour: 1, verifiedThisHour: 0 });
    const report = await runSweep({ ...contextOf(app.kit), now: () => at + 10 * 60_000 });
    expect(report.fulfilled).toBe(1);
    expect(await read()).toMatchObject({ sentThisHour: 1, verifiedThisHour: 1 });
  });

  it('a user who verified before is not held back by a tripped country; a new account is', async () => {
    const known = await app.agent().signIn('known-gh-user');
    await app.clock.pinned(dayOf(9), async () => {
      const started = await known.startWithNumber('add_phone', '+233241000001');
      await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
      expect((await known.landFor(started.sessionId, started.state)).status).toBe(303);
    });
    await app.clock.pinned(dayOf(9) + 5 * 60_000, async () => {
      for (const phone of ['+233242000001', '+233243000001', '+233244000001', '+233245000001']) {
        expect((await startTo(app, phone)).status).toBe(200);
      }
      expect((await startTo(app, '+233246000001')).status).toBe(429);
      expect((await known.tryStartWithNumber('add_phone', '+233241000001')).status).toBe(200);
      // Once that text is left unverified, the user is held back as anyone else.
      expect((await known.tryStartWithNumber('add_phone', '+233241000001')).status).toBe(429);
    });
  });

  it('a tripped country stays refused while refused starts keep pressing on it, and reopens when they stop', async () => {
    const at = dayOf(10);
    await app.clock.pinned(at, async () => {
      for (const phone of ['+254711000001', '+254712000001', '+254713000001', '+254714000001']) {
        expect((await startTo(app, phone)).status).toBe(200);
      }
      // 14 refused starts in this hour: three times the hourly threshold (20 / 6) and more, as an attack presses.
      for (let n = 0; n < 14; n++) expect((await startTo(app, `+2547${20 + n}000001`)).status).toBe(429);
    });
    // An hour and five minutes later the texts left inside the last 60 minutes (3 of 4) are under
    // the threshold, but the refusals still inside it (10.5 of 14) hold the country.
    await app.clock.pinned(at + 65 * 60_000, async () => {
      expect((await startTo(app, '+254740000001')).status).toBe(429);
      const [decision] = await app.store.pumping!.listDecisions({ since: at + 60 * 60_000, limit: 1 });
      expect(decision).toMatchObject({ decision: 'refused', reasons: ['country_held'], country: 'KE' });
    });
    // Once nobody presses, it opens again.
    await app.clock.pinned(at + 125 * 60_000, async () => {
      expect((await startTo(app, '+254741000001')).status).toBe(200);
    });
  });

  it("an operator's block refuses every start to its key; a release lifts the rules", async () => {
    await app.clock.pinned(dayOf(3), async () => {
      const now = dayOf(3);
      await app.store.pumping!.setRule({
        dimension: 'block',
        key: '+254712345',
        rule: 'block',
        until: now + HOUR,
        setAt: now,
      });
      expect((await startTo(app, '+254712345001')).status).toBe(429);
      for (const phone of ['+84912345001', '+84912346001', '+84912347001', '+84912348001']) {
        expect((await startTo(app, phone)).status).toBe(200);
      }
      expect((await startTo(app, '+84912349001')).status).toBe(429);
      await app.store.pumping!.setRule({
        dimension: 'country',
        key: 'VN',
        rule: 'allow',
        until: now + HOUR,
        setAt: now,
      });
      expect((await startTo(app, '+84912349001')).status).toBe(200);
    });
  });

  it('the purge a start runs keeps the 14 days the thresholds read back, and deletes what is older', async () => {
    const now = dayOf(13);
    const hour = Math.floor(now / HOUR);
    const pumping = app.store.pumping!;
    const uganda = [{ dimension: 'country' as const, key: 'UG' }];
    // A verified text 13 days and 23 hours back still sets the country's best day; one 16 days back is past keeping.
    await pumping.recordSend({ sessionId: 'ug-kept', keys: uganda, hour: hour - 335 });
    await pumping.markVerified('ug-kept');
    await pumping.recordSend({ sessionId: 'ug-old', keys: uganda, hour: hour - 16 * 24 });
    // Texts of the days before this one (the start below adds one to the last 24 hours).
    const sentBefore = async () =>
      (await pumping.countsByDay({ dimension: 'country', hour, days: 17 }))
        .filter((d) => d.key === 'UG' && d.daysAgo >= 1)
        .reduce((n, d) => n + d.sent, 0);
    expect(await sentBefore()).toBe(2);
    await app.clock.pinned(now, async () => {
      expect((await startTo(app, '+256772000001')).status).toBe(200);
    });
    await waitFor(async () => (await sentBefore()) === 1, 5_000, 'the purge of the text past keeping, and only it');
    const read = await pumping.readPumping({ keys: uganda, address: '127.0.0.1', hour, now });
    expect(read.counts[0]!.maxVerifiedDay).toBe(1);
  });

  it('a purge that deleted a full batch (1,000 rows) runs again at the next start, not five minutes on', async () => {
    const now = dayOf(20);
    const hour = Math.floor(now / HOUR);
    const pumping = app.store.pumping!;
    const zimbabwe = [{ dimension: 'country' as const, key: 'ZW' }];
    // 1,200 texts past keeping, each in an hour of its own: more than one batch of the purge.
    for (let i = 0; i < 1_200; i++) {
      await pumping.recordSend({ sessionId: `zw-old-${i}`, keys: zimbabwe, hour: hour - 400 - i });
    }
    const oldTexts = async () =>
      (await pumping.countsByDay({ dimension: 'country', hour, days: 70 }))
        .filter((d) => d.key === 'ZW' && d.daysAgo >= 16)
        .reduce((n, d) => n + d.sent, 0);
    expect(await oldTexts()).toBe(1_200);
    await app.clock.pinned(now, async () => {
      // Starts within one minute: after the first one's purge, only a purge that repeats after a
      // full batch runs again before five minutes are up.
      let n = 0;
      await waitFor(
        async () => {
          await startTo(app, `+26377100${String(n++).padStart(4, '0')}`);
          return (await oldTexts()) === 0;
        },
        5_000,
        'the whole purge, by starts within one minute',
      );
    });
  });
});

describeEachAppStore("SMS pumping operators' reads and actions (kit.pumping)", (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await pumpingApp(await storeOptions(), { mode: 'refuse' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lists what trips now with its counts and thresholds, the decisions and the days; blocks, releases and clears a key', async () => {
    await app.clock.pinned(dayOf(7), async () => {
      for (const phone of NG.slice(0, 4)) expect((await startTo(app, phone)).status).toBe(200);
      expect(await app.kit.pumping.tripped()).toEqual([
        {
          dimension: 'country',
          key: 'NG',
          reasons: ['country_hourly'],
          unverifiedLastHour: 4,
          unverifiedLastDay: 4,
          hourlyThreshold: 3.3,
          dailyThreshold: 20,
          rule: undefined,
        },
      ]);
      expect(await app.kit.pumping.countsByDay({ by: 'country', days: 2 })).toEqual([
        { key: 'NG', daysAgo: 0, sent: 4, verified: 0 },
      ]);
      // A release lasts 24 hours unless told otherwise.
      expect(await app.kit.pumping.release({ country: 'NG' })).toMatchObject({
        rule: 'allow',
        until: dayOf(7) + 24 * HOUR,
      });
      expect((await startTo(app, NG[4]!)).status).toBe(200);
      const blocked = await app.kit.pumping.block({ block: '+33612399' });
      expect(blocked).toMatchObject({
        dimension: 'block',
        key: '+33612399',
        rule: 'block',
        until: dayOf(7) + 12 * HOUR,
      });
      expect((await startTo(app, '+33612399001')).status).toBe(429);
      // A blocked key is listed with its block even when its counts trip nothing.
      await app.kit.pumping.block({ block: '+2348031000' });
      expect((await app.kit.pumping.tripped()).find((t) => t.key === '+2348031000')).toMatchObject({
        dimension: 'block',
        reasons: [],
        rule: 'block',
      });
      await app.kit.pumping.clear({ block: '+2348031000' });
      expect((await app.kit.pumping.rules()).map((r) => `${r.key} ${r.rule}`).sort()).toEqual([
        '+33612399 block',
        'NG allow',
      ]);
      expect(await app.kit.pumping.clear({ block: '+33612399' })).toBe(true);
      expect((await startTo(app, '+33612399001')).status).toBe(200);
      expect((await app.kit.pumping.decisions()).map((d) => [d.decision, d.reasons])).toEqual([
        ['refused', ['blocked']],
      ]);
      await expect(app.kit.pumping.block({ country: 'Nigeria' })).rejects.toThrow(/ISO 3166-1 alpha-2/);
      await expect(app.kit.pumping.block({ block: '33612399' })).rejects.toThrow(/"\+" and digits/);
      await expect(app.kit.pumping.block({ country: 'NG', block: '+234' })).rejects.toThrow(/exactly one/);
      await expect(app.kit.pumping.block({ country: 'NG' }, -1)).rejects.toThrow(/positive number of hours/);
    });
  });

  it('keys an address as a start from it is keyed (IPv4-mapped as IPv4, IPv6 as its /64), so a block of it refuses that start', async () => {
    await app.clock.pinned(dayOf(9), async () => {
      // Every agent of the test app is 127.0.0.1: the IPv4-mapped spelling must block it.
      expect(await app.kit.pumping.block({ address: '::ffff:127.0.0.1' })).toMatchObject({ key: '127.0.0.1' });
      expect((await startTo(app, '+33612399002')).status).toBe(429);
      expect(await app.kit.pumping.clear({ address: ' 127.0.0.1 ' })).toBe(true);
      expect((await startTo(app, '+33612399003')).status).toBe(200);
      const v6 = '2001:db8:1:2:0:0:0:0/64';
      expect(await app.kit.pumping.block({ address: '2001:db8:1:2::9' })).toMatchObject({ key: v6 });
      expect(await app.kit.pumping.release({ address: '2001:db8:1:2::/64' })).toMatchObject({ key: v6, rule: 'allow' });
      expect(await app.kit.pumping.clear({ address: '2001:db8:1:2:ffff::1' })).toBe(true);
      for (const address of ['garbage', '2001:db8::/48', '203.0.113.7/32']) {
        await expect(app.kit.pumping.block({ address })).rejects.toThrow(/IPv4 address or an IPv6 address/);
      }
    });
  });

  it('refuses a target or a count that is no such thing with a message, and stores times as whole milliseconds', async () => {
    await app.clock.pinned(dayOf(9), async () => {
      await expect(app.kit.pumping.block(null as never)).rejects.toThrow(/Name a target/);
      await expect(app.kit.pumping.clear(undefined as never)).rejects.toThrow(/Name a target/);
      await expect(app.kit.pumping.block({ block: '+0' })).rejects.toThrow(/not starting with 0/);
      await expect(app.kit.pumping.decisions({ limit: Number.NaN })).rejects.toThrow(/limit must be a number/);
      await expect(app.kit.pumping.countsByDay({ days: Number.NaN })).rejects.toThrow(/days must be a number/);
      expect(await app.kit.pumping.block({ country: 'GH' }, 1.23456789)).toMatchObject({
        until: dayOf(9) + Math.round(1.23456789 * HOUR),
      });
      expect(await app.kit.pumping.clear({ country: 'GH' })).toBe(true);
    });
  });
});

describeEachAppStore('SMS pumping rules shared by two instances', (store, storeOptions) => {
  let first: TestApp;
  let second: TestApp;
  let dir: string | undefined;
  beforeAll(async () => {
    let database = await storeOptions();
    if (store === 'sqlite') {
      dir = mkdtempSync(join(tmpdir(), 'pumping-'));
      database = { database: { path: join(dir, 'shared.db') } };
    }
    first = await pumpingApp(database, { mode: 'refuse' });
    second = await pumpingApp(database, { mode: 'refuse' });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("texts sent by one instance count against the other's next start, and a verification landed on one counts on both", async () => {
    await first.clock.pinned(dayOf(4), () =>
      second.clock.pinned(dayOf(4), async () => {
        expect((await startTo(first, '+923011000001')).status).toBe(200);
        expect((await startTo(first, '+923021000001')).status).toBe(200);
        expect((await startTo(second, '+923031000001')).status).toBe(200);
        expect((await startTo(second, '+923041000001')).status).toBe(200);
        expect((await startTo(second, '+923051000001')).status).toBe(429);
        expect((await startTo(first, '+923051000001')).status).toBe(429);
        // Verified through the first instance's landing (PK released to let it through): counted
        // where the second reads.
        const now = dayOf(4);
        await second.store.pumping!.setRule({
          dimension: 'country',
          key: 'PK',
          rule: 'allow',
          until: now + HOUR,
          setAt: now,
        });
        await verifiedStart(first, '+923451000001');
        const [reading] = (
          await second.store.pumping!.readPumping({
            keys: [{ dimension: 'country', key: 'PK' }],
            address: '127.0.0.1',
            hour: Math.floor(dayOf(4) / HOUR),
            now: dayOf(4),
          })
        ).counts;
        expect(reading).toMatchObject({ sentThisHour: 5, verifiedThisHour: 1 });
      }),
    );
  });
});

describeEachAppStore("SMS pumping 'off'", (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await pumpingApp(await storeOptions(), { mode: 'off' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('counts nothing and writes nothing for it: no send at the start, no verification at the landing or the sweep', async () => {
    const pumping = app.store.pumping!;
    const marked: string[] = [];
    const markVerified = pumping.markVerified.bind(pumping);
    pumping.markVerified = (sessionId) => {
      marked.push(sessionId);
      return markVerified(sessionId);
    };
    await verifiedStart(app, '+2348036000001');
    const user = await app.agent().signIn('off-swept');
    const started = await user.startWithNumber('add_phone', '+2348037000001');
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    expect((await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 })).fulfilled).toBe(1);
    expect(marked).toEqual([]);
    const rows = await app.query<{ n: number | string }>('SELECT count(*) AS n FROM verify_kit_pumping_counts');
    expect(Number(rows[0]!.n)).toBe(0);
  });
});

describeEachAppStore('SMS pumping address rules', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    // Every agent is 127.0.0.1: two texts left unverified from it trip its daily and hourly rules.
    app = await pumpingApp(await storeOptions(), {
      mode: 'refuse',
      thresholds: { address: { dailyFloor: 2, hourlyFloor: 2 } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("hold back a user who verified before, whom the country and block rules let through; an operator's release of the address lifts them", async () => {
    const now = dayOf(11);
    await app.clock.pinned(now, async () => {
      const known = await app.agent().signIn('known-at-a-busy-address');
      const started = await known.startWithNumber('add_phone', '+233241000001');
      await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
      expect((await known.landFor(started.sessionId, started.state)).status).toBe(303);
      // Two texts to other countries left unverified from the address: its rules trip.
      for (const phone of ['+2348031000001', '+254711000001']) expect((await startTo(app, phone)).status).toBe(200);
      expect((await known.tryStartWithNumber('add_phone', '+233241000001')).status).toBe(429);
      const [decision] = await app.store.pumping!.listDecisions({ since: now, limit: 1 });
      expect(decision!.reasons).toEqual(expect.arrayContaining(['address_daily']));
      const rule = { dimension: 'address' as const, key: decision!.address, until: now + HOUR, setAt: now };
      await app.store.pumping!.setRule({ ...rule, rule: 'allow' });
      expect((await known.tryStartWithNumber('add_phone', '+233241000001')).status).toBe(200);
    });
  });

  it("an operator's release of the address lifts the rule on the countries it texts too", async () => {
    const now = dayOf(12);
    await app.clock.pinned(now, async () => {
      for (const phone of ['+2348031000002', '+254711000002']) expect((await startTo(app, phone)).status).toBe(200);
      expect((await startTo(app, '+233242000002')).status).toBe(429);
      const [decision] = await app.store.pumping!.listDecisions({ since: now, limit: 1 });
      await app.store.pumping!.setRule({
        dimension: 'address',
        key: decision!.address,
        rule: 'allow',
        until: now + HOUR,
        setAt: now,
      });
      // Five countries texted from the address, none verified: past the three its countries rule allows.
      for (const phone of ['+233242000002', '+84912345002', '+919812345002']) {
        expect((await startTo(app, phone)).status, phone).toBe(200);
      }
    });
  });
});

describeEachAppStore('SMS pumping decisions by mode, allow-list and challenge', (_store, storeOptions) => {
  let recording: TestApp;
  let challenging: TestApp;
  beforeAll(async () => {
    recording = await pumpingApp(await storeOptions(), {});
    challenging = await pumpingApp(await storeOptions(), {
      mode: 'refuse',
      alwaysAllow: { countries: ['GB'] },
      challenge: {
        verify(req) {
          const answer = (req.body as Record<string, string>)['cf-turnstile-response'];
          if (answer === 'throws') throw new Error('siteverify unreachable');
          if (answer === 'hangs') return new Promise<boolean>(() => {});
          // Truthy is not true: a verify that answers anything but `true` has not passed the start.
          if (answer === 'truthy') return 'yes' as unknown as boolean;
          return answer === 'passed';
        },
      },
    });
  });
  afterAll(async () => {
    await recording?.close();
    await challenging?.close();
  });

  it('record mode (the default) sends the start that trips a rule and records a warning', async () => {
    await recording.clock.pinned(dayOf(5), async () => {
      for (const phone of NG) expect((await startTo(recording, phone)).status).toBe(200);
      const [decision] = await recording.store.pumping!.listDecisions({ since: dayOf(5), limit: 5 });
      expect(decision).toMatchObject({ decision: 'warned', reasons: ['country_hourly'], country: 'NG' });
    });
  });

  it('an allowed country is never refused; a passed challenge lets one start through, a failing one never does', async () => {
    await challenging.clock.pinned(dayOf(6), async () => {
      for (let n = 1; n <= 5; n++) expect((await startTo(challenging, `+44740012300${n}`)).status).toBe(200);
      for (const phone of NG.slice(0, 4)) expect((await startTo(challenging, phone)).status).toBe(200);
      for (const answer of ['', 'wrong', 'throws', 'hangs', 'truthy']) {
        const refused = await startTo(challenging, NG[4]!, { 'cf-turnstile-response': answer });
        expect(refused.status, answer).toBe(429);
      }
      const passed = await startTo(challenging, NG[4]!, { 'cf-turnstile-response': 'passed' });
      expect(passed.status).toBe(200);
      const decisions = await challenging.store.pumping!.listDecisions({ since: dayOf(6), limit: 10 });
      expect(decisions.map((d) => d.decision)).toEqual([
        'challenged',
        'refused',
        'refused',
        'refused',
        'refused',
        'refused',
      ]);
      // The start that failed the challenge says why in the log, without a stack.
      expect(challenging.logs.join('\n')).toContain('the SMS pumping challenge failed');
    });
  });

  it("an operator's block refuses in record mode too, and no challenge lets a start through it", async () => {
    const now = dayOf(7);
    await recording.clock.pinned(now, async () => {
      const rule = {
        dimension: 'block' as const,
        key: '+2348091230',
        rule: 'block' as const,
        until: now + HOUR,
        setAt: now,
      };
      await recording.store.pumping!.setRule(rule);
      expect((await startTo(recording, '+2348091230001')).status).toBe(429);
      const [decision] = await recording.store.pumping!.listDecisions({ since: now, limit: 1 });
      expect(decision).toMatchObject({ decision: 'refused', reasons: ['blocked'] });
    });
    await challenging.clock.pinned(now, async () => {
      await challenging.store.pumping!.setRule({
        dimension: 'block',
        key: '+2348091240',
        rule: 'block',
        until: now + HOUR,
        setAt: now,
      });
      const refused = await startTo(challenging, '+2348091240001', { 'cf-turnstile-response': 'passed' });
      expect(refused.status).toBe(429);
    });
  });

  it("an operator's block refuses an allow-listed start too: the allow-list lifts the counts' rules, not the block", async () => {
    const now = dayOf(8);
    await challenging.clock.pinned(now, async () => {
      // GB is allow-listed; an attack on one of its blocks is what the operator answers with a block.
      await challenging.kit.pumping.block({ block: '+447400125' });
      const before = await texts(challenging);
      const refused = await startTo(challenging, '+447400125001', { 'cf-turnstile-response': 'passed' });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3600');
      expect(await texts(challenging)).toBe(before);
      const [decision] = await challenging.store.pumping!.listDecisions({ since: now, limit: 1 });
      expect(decision).toMatchObject({ decision: 'refused', reasons: ['blocked'], country: 'GB', block: '+447400125' });
      // A blocked user of an allow-listed country is refused too; the rest of the country is not.
      const user = challenging.agent();
      await user.signIn('blocked-allow-listed-user');
      await challenging.kit.pumping.block({ user: 'user-blocked-allow-listed-user' });
      expect((await user.tryStartWithNumber('add_phone', '+447400126001')).status).toBe(429);
      expect((await startTo(challenging, '+447400126002')).status).toBe(200);
      expect(await texts(challenging)).toBe(before + 1);
    });
  });
});

/** Numbers the app keeps (resolveUser's), in Jamaica (+1 876: its own country, not the US), each in a block of its own. */
const JM = ['+18762100001', '+18762200001', '+18762300001', '+18762400001', '+18762500001'];

const phoneOnFile: ActionDefinition<unknown> = {
  name: 'phone_on_file',
  operationSensitivity: 'normal',
  successPath: '/done/phone',
  fulfil: () => {},
};

describeEachAppStore('SMS pumping rules on the numbers the app keeps', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [phoneOnFile],
        // Each user is named after the number on file.
        resolveUser: (req) => {
          const name = (req.session as { user?: string }).user;
          return name === undefined ? null : { userRef: `user-${name}`, destination: name };
        },
        pumping: { mode: 'refuse', thresholds: { address: { dailyFloor: 1000, hourlyFloor: 1000 } } },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("counts a stored number under the number's own country, as a typed one", async () => {
    await app.clock.pinned(dayOf(7), async () => {
      for (const phone of JM.slice(0, 4)) {
        expect((await (await app.agent().signIn(phone)).tryStart('phone_on_file')).status).toBe(200);
      }
      expect((await (await app.agent().signIn(JM[4]!)).tryStart('phone_on_file')).status).toBe(429);
      const [decision] = await app.store.pumping!.listDecisions({ since: dayOf(7), limit: 1 });
      expect(decision).toMatchObject({ decision: 'refused', reasons: ['country_hourly'], country: 'JM' });
    });
  });
});

describeEachAppStore('SMS pumping rules with limits.ipv6Subnet', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      // The client's address comes from X-Forwarded-For, as behind a proxy the app trusts.
      ownRoutes: (host) => host.set('trust proxy', 'loopback'),
      kit: {
        actions: [addPhone],
        limits: { ...GENEROUS_START_LIMITS, ipv6Subnet: 48 },
        pumping: { mode: 'refuse', thresholds: { address: { dailyFloor: 1000, hourlyFloor: 1000 } } },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** A start to `phone` from the IPv6 client `ip`. */
  async function startFrom(ip: string, phone: string): Promise<Answer> {
    const user = await app.agent().signIn(`subnet-${Math.random()}`);
    return user.postStart({ _csrf: user.csrf, action: 'add_phone', phone }, { 'x-forwarded-for': ip });
  }

  it('counts and blocks an IPv6 client by the prefix the start budgets count it by, not by its /64', async () => {
    await app.clock.pinned(dayOf(1), async () => {
      const slash48 = '2001:db8:1:0:0:0:0:0/48';
      // An operator's block of an address stands for the client's /48, as its budget does.
      expect(await app.kit.pumping.block({ address: '2001:db8:1:ffff::1' })).toMatchObject({ key: slash48 });
      // Another /64 of the same /48: the same client to the start budgets, so the block refuses it.
      expect((await startFrom('2001:db8:1:2::9', '+33612399101')).status).toBe(429);
      const [refused] = await app.store.pumping!.listDecisions({ since: dayOf(1), limit: 1 });
      expect(refused).toMatchObject({ decision: 'refused', reasons: ['blocked'], address: slash48 });
      // Another /48 is another client.
      expect((await startFrom('2001:db8:2:2::9', '+33612399102')).status).toBe(200);
      expect(await app.kit.pumping.clear({ address: '2001:db8:1::/48' })).toBe(true);
      expect((await startFrom('2001:db8:1:2::9', '+33612399103')).status).toBe(200);
    });
  });
});
