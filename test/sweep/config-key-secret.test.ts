/**
 * `hosted-sms-verify-kit sweep` never prints any part of a secret of its environment (six
 * characters or more). Refusing a `{ kit, close }` configuration with extra keys, it names each key
 * cut to 40 characters: cut once redacted, since a key cut first to the secret's first seven
 * characters matched no eight-character fragment and was printed (the sweep_config_error line).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { runCli } from '../../cli/dispatch.ts';

const SECRET = 'Zq8sLw3PmT9vXk2RbN7cYd4HfG6j';
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'review-c-sweep-'));
  writeFileSync(
    join(dir, 'keyed.config.mjs'),
    "const key = 'extra-setting-for-the-client-key-' + process.env.VERIFY_CLIENT_SECRET;\n" +
      'export default { kit: {}, close: async () => {}, [key]: true };\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('sweep: an extra key holding the secret is named without any 6 characters of it', async () => {
  let out = '';
  vi.stubEnv('VERIFY_CLIENT_SECRET', SECRET);
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((t: string | Uint8Array) => {
    out += String(t);
    return true;
  });
  const code = await runCli(
    ['sweep', '--once', '--config', join(dir, 'keyed.config.mjs')],
    { PATH: process.env.PATH ?? '', VERIFY_CLIENT_SECRET: SECRET },
    { write: (t: string) => void (out += t), warn: (t: string) => void (out += t) },
  );
  stdout.mockRestore();
  vi.unstubAllEnvs();
  expect(code).toBe(1);
  expect(out).toContain('is not taken there');
  const parts = Array.from({ length: SECRET.length - 5 }, (_, at) => SECRET.slice(at, at + 6));
  expect(parts.filter((part) => out.includes(part))).toEqual([]);
});
