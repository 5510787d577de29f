/**
 * `hosted-sms-verify-kit fraud` reads its arguments before its configuration, so the client secret
 * is not yet known to the redaction (unless the environment holds it). A secret pasted on the
 * command line with a flag the command does not take (`--client-secret=<secret>`) is refused
 * naming the flag, never repeating the value; a misspelt flag alone is still quoted back.
 */
import { expect, it } from 'vitest';
import { parse } from '../../cli/fraud-args.ts';

const SECRET = 'sk_live_Qm3Zt8Lw2Rx9Vb4N';

function refusal(argv: string[]): string {
  try {
    parse(argv, {});
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

it.each([[`--client-secret=${SECRET}`], [`--secret=${SECRET}`], [`-${SECRET}`]])(
  'an unknown option %s: refused, the secret not repeated',
  (arg) => {
    const message = refusal(['rules', arg, '--config', 'verify.config.mjs']);
    expect(message).toMatch(/^unknown option /);
    expect(message).not.toContain(SECRET.slice(0, 8));
    expect(message).not.toContain(SECRET.slice(-8));
  },
);

it('a misspelt flag is quoted back', () => {
  expect(refusal(['rules', '--jsn', '--config', 'verify.config.mjs'])).toBe('unknown option "--jsn".');
  expect(refusal(['rules', '--client-secret=x', '--config', 'verify.config.mjs'])).toBe(
    'unknown option "--client-secret=" (its value not repeated).',
  );
});
