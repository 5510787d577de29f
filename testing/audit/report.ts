/** The audit's report: one result per check, a table for people and JSON for CI. */

export interface CheckResult {
  id: string;
  title: string;
  /**
   * 'not-run' when an option the check needs was not given, a host it must reach could not be
   * reached, or the audit stopped before its checks (its evidence says which): never a pass, and
   * never a failure with a fix.
   */
  status: 'pass' | 'fail' | 'not-run';
  /** What the check saw: its failed expectations first, then its notes. */
  evidence: string[];
  /** The fix in one sentence (shown for a failure, kept for a pass). */
  fix: string;
  ms: number;
}

export interface AuditReport {
  /**
   * True when no check failed and at least one ran: a check not run is listed as such and is no
   * failure, but a run in which none ran (`noCheckRan` says why) is not ok.
   */
  ok: boolean;
  /** Why the audit stopped before its checks (they are then all not run, with this reason; `ok` is false), if it did. */
  stopped?: string;
  /** How effects were counted: your probe, or the kit's fulfilment mark through its read API (0 or 1 per attempt). */
  counting: 'probe' | 'read-api';
  checks: CheckResult[];
  ms: number;
}

/** The ids of the failed checks. */
export function failedIds(report: AuditReport): string[] {
  return report.checks.filter((check) => check.status === 'fail').map((check) => check.id);
}

/** The ids of the checks not run (an option they need was not given, or a host they need was unreachable). */
export function notRunIds(report: AuditReport): string[] {
  return report.checks.filter((check) => check.status === 'not-run').map((check) => check.id);
}

/**
 * When no check ran (each was not run), the line that says so with each one's reason; undefined
 * when one ran (or the audit stopped before its checks, said by `stopped`).
 */
export function noCheckRan(report: AuditReport): string | undefined {
  if (report.stopped !== undefined || report.checks.some((check) => check.status !== 'not-run')) return undefined;
  const reasons = report.checks.map((check) => `${check.id} (${(check.evidence[0] ?? '').replace(/^not run: /, '')})`);
  return `no check ran: ${reasons.join('; ')}`;
}

const STATUS = { pass: 'pass    ', fail: 'FAIL    ', 'not-run': 'not run ' } as const;

/** A plain-text table: one line per check, and under each failure its evidence and fix. */
export function formatAuditTable(report: AuditReport): string {
  const width = Math.max(...report.checks.map((c) => c.id.length), 5);
  const lines = [`${'check'.padEnd(width)}  result    ms`, `${'-'.repeat(width)}  --------  ----`];
  for (const check of report.checks) {
    lines.push(`${check.id.padEnd(width)}  ${STATUS[check.status]}  ${check.ms}`);
    if (check.status === 'not-run') lines.push(`${' '.repeat(width)}    - ${check.evidence[0] ?? 'not run'}`);
    if (check.status === 'fail') {
      for (const line of check.evidence.slice(0, 6)) lines.push(`${' '.repeat(width)}    - ${line}`);
      lines.push(`${' '.repeat(width)}    fix: ${check.fix}`);
    }
  }
  const failed = failedIds(report).length;
  const notRun = notRunIds(report).length;
  if (report.stopped !== undefined) lines.push('', `The audit stopped before its checks: ${report.stopped}`);
  lines.push(
    '',
    `${report.checks.length - failed - notRun} passed, ${failed} failed${notRun === 0 ? '' : `, ${notRun} not run`} in ${report.ms} ms (effects counted by ${report.counting === 'probe' ? 'your probe' : "the kit's read API"})`,
  );
  return lines.join('\n');
}

/** The report as JSON for CI. */
export function formatAuditJson(report: AuditReport): string {
  return JSON.stringify(report, null, 2);
}
