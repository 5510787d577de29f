/**
 * `hosted-sms-verify-kit fraud` prints what the store holds to an operator's terminal: a user's key
 * is the app's userRef (a name a user may choose), and one holding control characters (ESC, a C1
 * CSI, BEL) or marks that reorder a line (RLO) must not drive the terminal, clear it or hide a rule.
 * They are shown escaped, in the lines and in the JSON (which stays JSON).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { fraudHere, writeFraudConfigs } from '../support/fraud-command.ts';

const USER = 'mallory\u001b[2J\u001b]0;owned\u0007\u009b31m\u202eevil';
/** Characters that drive a terminal or reorder what it shows. */
const DRIVING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

let dir: string;
let store: VerifyStore<unknown>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'verify-fraud-controls-'));
  const file = join(dir, 'app.sqlite');
  store = createSqliteStore({ database: file });
  writeFraudConfigs(dir, 'sqlite', file, join(dir, 'empty.sqlite'));
  const now = Date.now();
  await store.pumping!.setRule({ dimension: 'user', key: USER, rule: 'block', until: now + 3_600_000, setAt: now });
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('shows a rule on a user whose key holds control characters escaped, never raw', async () => {
  const lines = await fraudHere(dir, 'verify.config.mjs', 'rules');
  expect(lines).toMatchObject({ code: 0, stderr: '' });
  expect(lines.stdout).toMatch(/^blocked user "mallory\\u001b\[2J\\u001b\]0;owned\\u0007\\u009b31m\\u202eevil" until /);
  expect(lines.stdout).not.toMatch(DRIVING);
});

it('keeps the JSON free of raw control characters, and still JSON', async () => {
  const json = await fraudHere(dir, 'verify.config.mjs', 'rules', '--json');
  expect(json).toMatchObject({ code: 0, stderr: '' });
  expect(json.stdout).not.toMatch(DRIVING);
  expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ dimension: 'user', key: USER })]);
});
