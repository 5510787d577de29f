/**
 * Command-line flags: one that takes one value given twice (a parser keeps the last, while the
 * operator meant one of them and which is unsaid: the kit's commands and the sweep job refuse it),
 * and an argument a command does not take, quoted without a secret or a number pasted there.
 */
import { MIN_SECRET_LENGTH } from '../errors.ts';
import { quotedUnlessNumber } from '../numbers/mask-number.ts';

/** The flag an argument gives (`--name` for `--name` and `--name=value`), or undefined for a value. */
function flagOf(arg: string): string | undefined {
  if (!arg.startsWith('--')) return undefined;
  const equals = arg.indexOf('=');
  return equals === -1 ? arg : arg.slice(0, equals);
}

/**
 * What to tell the operator when `argv` gives one of the `once` flags twice (as `--flag value`
 * or `--flag=value`, in any mix), naming the first such flag; undefined when none is repeated.
 */
export function flagGivenTwice(argv: readonly string[], once: readonly string[]): string | undefined {
  const given = new Set<string>();
  for (const arg of argv) {
    const flag = flagOf(arg);
    if (flag === undefined || !once.includes(flag)) continue;
    if (given.has(flag)) return `${flag} given twice: give it once.`;
    given.add(flag);
  }
  return undefined;
}

/** What a refusal says in place of an argument that may be a client secret pasted on the command line. */
export const NOT_REPEATED_SECRET = 'a value not repeated here, as it may be a secret';

/**
 * An argument a command does not take, as its refusal quotes it: an option's name, never a value
 * given with it. The arguments are read before the configuration, so no redaction knows the client
 * secret yet: `--block=+447400123456` and `--client-secret=<secret>` are unknown options too.
 * Anything but a name is quoted only when shorter than a secret, and unless it may hold a number.
 * `takes`: the flags the command takes, told to give their value after a space.
 */
export function shownArgument(arg: string, takes: ReadonlySet<string> = new Set()): string {
  const equals = arg.indexOf('=');
  const name = equals === -1 ? arg : arg.slice(0, equals);
  if (/^--?[a-z][a-z-]{0,30}$/i.test(name)) {
    if (equals === -1) return `"${name}"`;
    const taken = takes.has(name) ? `: give ${name} its value after a space` : '';
    return `"${name}=" (its value not repeated)${taken}`;
  }
  return arg.length < MIN_SECRET_LENGTH ? quotedUnlessNumber(arg) : NOT_REPEATED_SECRET;
}
