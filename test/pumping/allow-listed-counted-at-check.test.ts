/**
 * An allow-listed start's text is counted by its check, before its text is sent, as a judged
 * start's is, on SQLite and PostgreSQL: a judged start to the same number block at the same time
 * reads it (else a known user's concurrent start, or the block's rules, would judge one text short),
 * and a start that ends before its session exists gives it back. Before, it was counted only once
 * the session existed.
 */
import type { Request } from 'express';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { hourOf } from '../../middleware/pumping/pumping-rules.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { testGuard } from '../support/pumping-guard.ts';

const NOW = 480_000 * 3_600_000 + 10 * 60_000;
const PHONE = '+447400123456';
const req = { ip: '203.0.113.9', socket: {}, body: {} } as unknown as Request;

describeEachStore("an allow-listed start's text", (kind) => {
  let h: StoreUnderTest;
  let pumping: PumpingStore;
  let guard: PumpingGuard;
  beforeEach(async () => {
    h = await kind.open();
    pumping = h.store.pumping!;
    guard = testGuard(pumping, { mode: 'refuse', alwaysAllow: { countries: ['GB'] } }, NOW);
  });
  afterEach(async () => {
    await h.dispose();
  });

  /** The texts counted this hour under the start's country and number block. */
  async function countedNow(): Promise<number[]> {
    const { keys, address } = startKeys(PHONE, req.ip!, 'user-1');
    const reading = await pumping.readPumping({ keys, address, hour: hourOf(NOW), now: NOW });
    return [reading.counts[0]!.sentThisHour, reading.counts[1]!.sentThisHour];
  }

  it('is counted when its check lets it through, before any session exists', async () => {
    const pass = await guard(req, { userRef: 'user-1', destination: PHONE });
    expect(pass).toBeDefined();
    expect(await countedNow()).toEqual([1, 1]);
    // Sent: its send is recorded, and its text is counted no second time.
    await pass!.sent('session-allowed-1');
    expect(await countedNow()).toEqual([1, 1]);
  });

  it('is given back when the start ends before its session exists', async () => {
    const pass = await guard(req, { userRef: 'user-1', destination: PHONE });
    await pass!.unsent();
    expect(await countedNow()).toEqual([0, 0]);
  });
});
