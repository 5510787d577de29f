/**
 * Command-line flags that take one value. A parser given one twice keeps the last, while the
 * operator meant one of them and which is unsaid: the kit's commands and the sweep job refuse it.
 */

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
