/**
 * The countries one address texted without a verification (the SMS pumping rule address_countries)
 * are found by the address's keys, "<address> <country>". On PostgreSQL that read must not depend on
 * how the database sorts text: a server set up with en_US.UTF-8 (the official Docker image's
 * default) sorts by a collation that skips spaces and punctuation, as ICU's "shifted" does, which
 * the PostgreSQL case here creates its database with. SQLite sorts text by its bytes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { PumpingKey, PumpingStore } from '../../middleware/store/types.ts';
import { createTestDatabase, postgresUnavailable } from '../support/postgres.ts';

const H0 = 480_000; // an hour number (ms / 3,600,000), in 2024

interface Opened {
  pumping: PumpingStore;
  close(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const dir = mkdtempSync(join(tmpdir(), 'verify-text-order-'));
  const store = createSqliteStore({ database: join(dir, 'kit.sqlite') });
  return {
    pumping: store.pumping,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A database whose text sorts as en_US.UTF-8 does: spaces and punctuation skipped at first. */
async function openPostgresSortingAsEnUs(): Promise<Opened> {
  const database = await createTestDatabase({ icuLocale: 'en-u-ka-shifted' });
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  const store = createPostgresStore({ pool });
  await store.ready;
  return {
    pumping: store.pumping,
    async close() {
      await store.close();
      await pool.end();
      await database.drop();
    },
  };
}

const KINDS = [
  { name: 'sqlite', unavailable: undefined, open: openSqlite },
  { name: 'postgres', unavailable: postgresUnavailable, open: openPostgresSortingAsEnUs },
];

const keysOf = (country: string, address: string): PumpingKey[] => [
  { dimension: 'country', key: country },
  { dimension: 'address', key: address },
  { dimension: 'address_country', key: `${address} ${country}` },
];

describe.each(KINDS)('address countries whatever the database sorts text by, on $name', (kind) => {
  if (kind.unavailable !== undefined) {
    it.skip(`not run: ${kind.unavailable}`, () => {});
    return;
  }
  let opened: Opened | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  it("counts an address's unverified countries, and only that address's", async () => {
    opened = await kind.open();
    const { pumping } = opened;
    const address = '192.0.2.1';
    for (const [n, country] of ['GB', 'NG', 'PK', 'ID'].entries()) {
      await pumping.recordSend({ sessionId: `c${n}`, keys: keysOf(country, address), hour: H0 });
    }
    // Addresses that share its first characters are other addresses.
    await pumping.recordSend({ sessionId: 'o1', keys: keysOf('VN', '192.0.2.10'), hour: H0 });
    await pumping.recordSend({ sessionId: 'o2', keys: keysOf('KH', '192.0.2.1.5'), hour: H0 });
    const read = () => pumping.readPumping({ keys: [], address, hour: H0, now: H0 * 3_600_000 });
    expect((await read()).unverifiedCountries).toBe(4);
    // The check before a text reads them too, as they were before its own text.
    const query = { keys: keysOf('BD', address), address, hour: H0, now: H0 * 3_600_000 };
    const check = await pumping.reserveSend(query, () => ({ count: 'text' }));
    expect(check.unverifiedCountries).toBe(4);
    await pumping.markVerified('c0');
    expect((await read()).unverifiedCountries).toBe(4); // GB verified; BD, counted by the check, now in
  });
});
