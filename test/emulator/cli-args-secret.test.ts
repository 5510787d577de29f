/**
 * `hosted-sms-verify-kit emulator` reads its flags before anything else, so nothing knows a client
 * secret to hide yet: one pasted on the command line (as an argument without a flag, as an unknown
 * option's value or as a flag's value, holding a dot or not) or into an EMULATOR_* setting is
 * refused without being repeated on stderr. A short mistake, a flag's own name, or the file name
 * given to --clients (a path, or a `.json` file: a secret is neither) is still quoted back.
 */
import { expect, it } from 'vitest';
import { runCli } from '../../cli/dispatch.ts';
import { command } from '../../cli/emulator.ts';

const SECRET = 'sk_live_Qm3Zt8Lw2Rx9Vb4N';
const DOTTED_SECRET = 'sk_live.Zm9vYmFyYmF6cXV4';

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
  [['--port', DOTTED_SECRET]],
  [['--control', DOTTED_SECRET]],
  [[`--page-host=${DOTTED_SECRET}`]],
  [['--clients', SECRET]],
  [[`--clients=${DOTTED_SECRET}`]],
])('%j: refused, the secret not repeated', async (argv) => {
  const message = await refusal(argv);
  for (const secret of [SECRET, DOTTED_SECRET]) {
    expect(message).not.toContain(secret.slice(0, 8));
    expect(message).not.toContain(secret.slice(-8));
  }
});

it.each([
  'EMULATOR_PORT',
  'EMULATOR_CONTROL',
  'EMULATOR_PAGE_HOST',
  'EMULATOR_STATUS_READS_PER_SECOND',
  'EMULATOR_CREATES_PER_SECOND',
])('%s holding a secret: refused, exit 1, the secret not repeated on stderr', async (name) => {
  let printed = '';
  const print = (text: string) => void (printed += text);
  const code = await runCli(['emulator'], { [name]: ` ${SECRET}` }, { write: print, warn: print });
  expect(code).toBe(1);
  expect(printed).toContain(name);
  expect(printed).not.toContain(SECRET.slice(-8));
});

it('the file name given to --clients is named when it cannot be read', async () => {
  expect(await refusal(['--clients', './no-such-clients.json'])).toContain(
    '--clients ./no-such-clients.json: cannot read it',
  );
});

it.each([['--port='], ['--control='], ['--page-host= ']])(
  '%s (a flag given no value) is a usage error',
  async (flag) => {
    expect(await refusal([flag])).toContain('was given no value');
  },
);

it('a short mistake and an unknown flag are still quoted back', async () => {
  expect(await refusal(['--port', 'lots'])).toContain('got "lots"');
  expect(await refusal(['--control', 'maybe'])).toContain('got "maybe"');
  expect(await refusal(['--prot', '0'])).toContain("'--prot'");
  expect(await refusal(['extra'])).toContain("'extra'");
});
