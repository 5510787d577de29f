/**
 * An unknown command is quoted back only when it is a word and no piece of a secret of the
 * environment: a command word that is eight letters of the client secret (pasted short where the
 * command goes) was quoted whole, as only a whole secret was looked for.
 */
import { expect, it } from 'vitest';
import { runCli } from '../../cli/dispatch.ts';

const SECRET = 'kqzvwbrhtmplxnsd-2024-Rotated';

it('an unknown command that is eight letters of the secret is not quoted, and the commands are listed', async () => {
  let out = '';
  const piece = SECRET.slice(2, 10);
  const code = await runCli(
    [piece],
    { PATH: process.env.PATH ?? '', VERIFY_CLIENT_SECRET: SECRET },
    { write: (t: string) => void (out += t), warn: (t: string) => void (out += t) },
  );
  expect(code).toBe(1);
  expect(out).toContain('Unknown command (the first argument, not shown: a command is a word, such as sweep).');
  expect(out).not.toContain(piece);
});

it('a misspelt command that shares no eight characters with the secret is still quoted', async () => {
  let out = '';
  const code = await runCli(
    ['sweeep'],
    { PATH: process.env.PATH ?? '', VERIFY_CLIENT_SECRET: SECRET },
    { write: (t: string) => void (out += t), warn: (t: string) => void (out += t) },
  );
  expect(code).toBe(1);
  expect(out).toContain('Unknown command "sweeep"');
});
