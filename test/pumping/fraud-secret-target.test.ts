/**
 * `hosted-sms-verify-kit fraud block --user <the client secret>` (a secret pasted where a userRef
 * goes) is refused before anything is written, and never printed back nor listed by `fraud rules`;
 * what the command prints is redacted as its errors are. `fraud rules` lists a userRef holding a
 * number in groups masked. Runs the built dispatcher (dist).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { builtFile } from '../support/built.ts';
import { fraudHere } from '../support/fraud-command.ts';

/** The configuration's clientSecret: a portal's, no run of digits in it. */
const SECRET = 'sk_live_Qm3Zt8Lw2Rx9Vb4NpKdH';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fraud-secret-target-'));
  const sqlite = JSON.stringify(builtFile('middleware/store/sqlite/sqlite.js'));
  writeFileSync(
    join(dir, 'verify.config.mjs'),
    `import { createSqliteStore } from ${sqlite};
export default () => ({ close: () => {}, kit: {
  baseUrl: 'http://127.0.0.1:9', clientId: 'fraud-client', clientSecret: ${JSON.stringify(SECRET)},
  returnUrl: 'http://localhost:3998/verify/return', store: createSqliteStore({ database: ${JSON.stringify(join(dir, 'pumping.db'))} }),
  actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
} });
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each run of 8 characters of the secret, as the kit's own redaction looks for. */
const fragments = Array.from({ length: SECRET.length - 7 }, (_, at) => SECRET.slice(at, at + 8));

it('fraud block --user <the client secret>: never printed back, nor listed by fraud rules', async () => {
  const blocked = await fraudHere(dir, 'verify.config.mjs', 'block', '--user', SECRET, '--hours', '1');
  expect(blocked.code).toBe(1);
  expect(blocked.stderr).toMatch(/user holds the client secret/);
  const lines = await fraudHere(dir, 'verify.config.mjs', 'rules');
  const json = await fraudHere(dir, 'verify.config.mjs', 'rules', '--json');
  const printed = [blocked, lines, json].map((answer) => `${answer.stdout}${answer.stderr}`).join('\n');
  expect(
    fragments.filter((fragment) => printed.includes(fragment)),
    printed,
  ).toEqual([]);
});

it('fraud rules redacts a rule on the secret stored before targets were checked', async () => {
  const store = createSqliteStore({ database: join(dir, 'pumping.db') });
  const now = Date.now();
  await store.pumping!.setRule({ dimension: 'user', key: SECRET, rule: 'block', until: now + 3_600_000, setAt: now });
  await store.close();
  const lines = await fraudHere(dir, 'verify.config.mjs', 'rules');
  const json = await fraudHere(dir, 'verify.config.mjs', 'rules', '--json');
  const printed = [lines, json].map((answer) => `${answer.stdout}${answer.stderr}`).join('\n');
  expect(printed).toContain('blocked user [redacted]');
  expect(
    fragments.filter((fragment) => printed.includes(fragment)),
    printed,
  ).toEqual([]);
});

it('fraud rules lists a userRef holding a number in groups masked', async () => {
  await fraudHere(dir, 'verify.config.mjs', 'block', '--user', 'tel_+1-555-010-0001', '--hours', '1');
  const listed = await fraudHere(dir, 'verify.config.mjs', 'rules', '--json');
  const keys = (JSON.parse(listed.stdout) as { dimension: string; key: string }[])
    .filter((rule) => rule.dimension === 'user')
    .map((rule) => rule.key);
  for (const key of keys) expect(key.replace(/\D/g, ''), key).not.toContain('15550100001');
});
