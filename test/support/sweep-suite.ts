/**
 * The set-up of a sweep suite that runs on every store (inside describeEachStore's body): the real
 * client on the suite's emulator for the whole suite, and after each test the store it opened
 * disposed of and the emulator reset.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { VerifyClient } from '../../middleware/types.ts';
import type { TestEmulator } from './emulator.ts';
import type { StoreKind, StoreUnderTest } from './stores.ts';
import { client } from './sweep-bench.ts';

export interface SweepSuite {
  /** The client on the suite's emulator: read it in a hook or a test. */
  readonly client: VerifyClient;
  /** An empty store of the suite's kind, disposed of after the test. */
  open(): Promise<StoreUnderTest>;
}

export function useSweepSuite(emu: TestEmulator, kind: StoreKind): SweepSuite {
  let verifyClient: VerifyClient | undefined;
  let opened: StoreUnderTest | undefined;
  beforeAll(() => {
    verifyClient = client(emu.url);
  });
  afterEach(async () => {
    await opened?.dispose();
    opened = undefined;
    await emu.control.reset();
  });
  afterAll(async () => {
    await verifyClient?.close();
  });
  return {
    get client() {
      if (verifyClient === undefined)
        throw new Error('The suite client exists from beforeAll on: read it in a hook or a test.');
      return verifyClient;
    },
    async open() {
      opened = await kind.open();
      return opened;
    },
  };
}
