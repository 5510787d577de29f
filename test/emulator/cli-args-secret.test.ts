/**
 * `hosted-sms-verify-kit emulator` reads its flags before anything else, so nothing knows a client
 * secret to hide yet: one pasted on the command line (as an argument without a flag, as an unknown
 * option's value or as a flag's value) is refused without being repeated on stderr. A short
 * mistake, or a flag's own name, is still quoted back.
 */
import { expect, it } from 'vitest';
import { command } from '../../cli/emulator.ts';

const SECRET = 'sk_live_Qm3Zt8Lw2Rx9Vb4N';

async function refusal(argv: string[]): Promise<string> {
  try {
    await command.run(argv, {});
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

it.each([
  [[SECRET]],
  [[`--client-secret=${SECRET}`]],
  [['--port', SECRET]],
  [[`--port=${SECRET}`]],
  [['--control', SECRET]],
  [['--page-host', SECRET]],
  [['--port', '0', '--', SECRET]],
])('%j: refused, the secret not repeated', async (argv) => {
  const message = await refusal(argv);
  expect(message).not.toContain(SECRET.slice(0, 8));
  expect(message).not.toContain(SECRET.slice(-8));
});

it('a short mistake and an unknown flag are still quoted back', async () => {
  expect(await refusal(['--port', 'lots'])).toContain('got "lots"');
  expect(await refusal(['--control', 'maybe'])).toContain('got "maybe"');
  expect(await refusal(['--prot', '0'])).toContain("'--prot'");
  expect(await refusal(['extra'])).toContain("'extra'");
});
