/**
 * Standard output holds the audit's report alone (`--json` is parsed by CI): while the command runs,
 * what your app or configuration writes there (console.log, a request logger's default stream)
 * goes to standard error instead.
 */

export interface ReportOutput {
  /** Writes the report to the real standard output. */
  report: (text: string) => void;
  /** Gives standard output back to everyone. */
  restore: () => void;
}

export function keepStdoutForReport(): ReportOutput {
  const stdout = process.stdout;
  const original = stdout.write;
  const toStderr = ((...args: Parameters<typeof stdout.write>) =>
    (process.stderr.write as (...written: unknown[]) => boolean)(...args)) as typeof stdout.write;
  stdout.write = toStderr;
  return {
    report: (text) => {
      original.call(stdout, text);
    },
    restore: () => {
      // Only our own replacement is undone: a writer installed since stays.
      if (stdout.write === toStderr) stdout.write = original;
    },
  };
}
