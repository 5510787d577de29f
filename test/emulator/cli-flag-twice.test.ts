/**
 * `hosted-sms-verify-kit emulator` given one of its flags twice: node's parser keeps the last, so
 * `--port 4010 --port 4011` listened on 4011 without a word (and `--clients a.json --clients b.json`
 * registered b's clients). Refused instead, exit 1, naming the flag, as the kit's other commands do,
 * before it listens. Runs the command as built.
 */
import { execFile } from 'node:child_process';
import { expect, it } from 'vitest';
import { builtFile } from '../support/built.ts';

const MAIN = builtFile('cli/main.js');

it.each([
  [['--port', '0', '--port', '0'], '--port'],
  [['--port=0', '--control', 'off', '--control=on'], '--control'],
  [['--page-host', 'verify.localhost', '--page-host=example.localhost'], '--page-host'],
  [['--clients', 'a.json', '--clients', 'b.json'], '--clients'],
])('%j: exit 1 naming %s, nothing listening', async (args, flag) => {
  const result = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [MAIN, 'emulator', ...args],
      { env: { PATH: process.env.PATH ?? '' }, timeout: 15_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code), output: `${stdout}${stderr}` }),
    );
  });
  expect(result.code).toBe(1);
  expect(result.output).toContain(`hosted-sms-verify-kit emulator: ${flag} given twice: give it once.`);
  expect(result.output).not.toContain('listening on');
});
