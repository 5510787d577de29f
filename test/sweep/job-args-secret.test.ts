/**
 * The sweep job's flags are read before its configuration, so the client secret is not yet known
 * to the redaction (unless the environment holds it). A secret pasted on the command line where a
 * flag's value or a flag goes (`--batch-size=<secret>`, or after the flags) is not repeated in the
 * job's line: it goes to the job's log, even holding a quote mark. A short mistake (`lots`, `2m`) is still quoted back.
 */
import { describe, expect, it } from 'vitest';
import { isKitError } from '../../middleware/errors.ts';
import { parseJobConfig } from '../../middleware/sweep/sweep-job-args.ts';

const SECRET = 'sk_live_Qm3Zt8Lw2Rx9Vb4N';

function refusal(argv: string[], env: Record<string, string> = {}): string {
  try {
    parseJobConfig(argv, env, undefined);
  } catch (error) {
    if (isKitError(error)) return error.message;
    throw error;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

describe('a secret typed where the job takes no secret', () => {
  it.each([
    [['--once', `--batch-size=${SECRET}`]],
    [['--once', '--lease-seconds', SECRET]],
    [['--once', SECRET]],
    [['--once', '--concurrency', '4', SECRET]],
    // Node quotes it as 'sk_live'9f8e…': a quote mark inside must not end what is hidden.
    [['--once', `sk_live'${SECRET.slice(8)}`]],
  ])('%j: refused, the secret not repeated', (argv) => {
    const message = refusal(argv);
    expect(message).not.toContain(SECRET.slice(0, 8));
    expect(message).not.toContain(SECRET.slice(-8));
  });

  it('a short mistake is quoted back', () => {
    expect(refusal(['--once', '--batch-size', 'lots'])).toContain('got "lots"');
    expect(refusal(['--once', 'sweep'])).toContain("'sweep'");
  });
});
