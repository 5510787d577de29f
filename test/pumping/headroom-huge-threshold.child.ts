/**
 * Child of headroom-huge-threshold.test.ts: the kit's SMS pumping guard, on a real SQLite store,
 * with thresholds the options accept (country.hourlyFloor from the command line, e.g.
 * Number.MAX_SAFE_INTEGER: "no hourly limit on a country"), checks one start from an empty store.
 * Prints each step; exits 0 at the end.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'express';
import { pumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { resolvePumping } from '../../middleware/pumping/pumping-options.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

const floor = Number(process.argv[2] ?? Number.MAX_SAFE_INTEGER);
const { resolved, problems } = resolvePumping({ mode: 'refuse', thresholds: { country: { hourlyFloor: floor } } });
console.log(`options problems: ${JSON.stringify(problems)}`);
const store = createSqliteStore({
  database: join(mkdtempSync(join(tmpdir(), 'headroom-huge-threshold-')), 'kit.sqlite'),
});
const logger = { info() {}, warn() {}, error() {}, debug() {} } as never;
const guard = pumpingGuard({
  pumping: resolved,
  store: store.pumping,
  logger,
  now: () => Date.now(),
  challengeTimeoutMs: 2000,
  ipv6Subnet: 64,
  releaseTimeoutMs: 2000,
});
console.log('checking a start');
const pass = await guard({ ip: '203.0.113.9', socket: {} } as unknown as Request, {
  userRef: 'user-1',
  destination: '+447400123456',
});
console.log(`start checked: ${pass === undefined ? 'no pass' : 'let through'}`);
process.exit(0);
