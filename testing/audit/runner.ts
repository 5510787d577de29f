/**
 * `auditIntegration(options)`: runs the checks against your running app and the emulator it
 * talks to. Checks that touch only their own users run a few at a time; those that read the
 * emulator's global counters or move the shared clock run alone after them; the checks that read
 * everything recorded run last. A check that throws fails with the error as its evidence, unless
 * a host it had to reach could not be reached: it is then not run, with the reason.
 */
import { UnreachableError } from './agent.ts';
import type { AuditCheck } from './check.ts';
import { Verdict, type LaterCount } from './check.ts';
import { AUDIT_CHECKS } from './catalogue.ts';
import { confirmEmulator } from './emulator-wiring.ts';
import { describeThrown } from './hooks.ts';
import { resolveAuditOptions, secretHider, type AuditOptions } from './options.ts';
import type { AuditReport, CheckResult } from './report.ts';
import { AuditWorld } from './world.ts';

/** The longest evidence line kept (after the secret is scrubbed: a cut never splits it). */
const EVIDENCE_CHARS = 300;

function evidenceOf(world: AuditWorld, lines: readonly string[]): string[] {
  return lines.map((line) => {
    const clean = world.scrub(line);
    return clean.length > EVIDENCE_CHARS ? `${clean.slice(0, EVIDENCE_CHARS)}...` : clean;
  });
}

/** A check as it ran: its verdict, kept until the run's later counts are in. */
interface Ran {
  check: AuditCheck;
  verdict: Verdict;
  ms: number;
}

async function runCheck(world: AuditWorld, check: AuditCheck): Promise<Ran> {
  const started = Date.now();
  const verdict = new Verdict();
  try {
    await check.run(world, verdict);
  } catch (error) {
    // Another host the audit could not reach tells nothing of the app's defences: not run, with the
    // reason. The app itself gone (it crashed mid-run) is a failure: its checks must never pass as skipped.
    if (error instanceof UnreachableError && error.origin !== new URL(world.options.appUrl).origin) {
      verdict.notRun = error.message;
    } else {
      verdict.expect(false, `the check could not run: ${describeThrown(error)}`);
    }
  }
  return { check, verdict, ms: Date.now() - started };
}

/**
 * How long after a count was read it is read again: longer than a job queue polling each second
 * takes to run what a request queued.
 */
const SETTLE_MS = 1500;

/**
 * Counts again, once the checks of `ran` are done, what they expected to stay as it was (those
 * `which` picks): a job the app queued, or a hook run after its answer, may have acted since.
 */
async function countAgain(
  world: AuditWorld,
  ran: readonly Ran[],
  which: (count: LaterCount) => boolean,
): Promise<void> {
  const later = ran.map(({ verdict }) => ({ verdict, counts: verdict.laterCounts.filter(which) }));
  const readAt = later.flatMap(({ counts }) => counts.map((count) => count.readAt));
  if (readAt.length === 0) return;
  // The checks that ran since the last read gave the work that much time already.
  const wait = Math.max(...readAt) + SETTLE_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  for (const { verdict, counts } of later) {
    for (const { what, expected, read, failure } of counts) {
      try {
        const count = await read(world);
        verdict.expect(count === expected, failure(count));
      } catch (error) {
        // One failed count ends the recount: a probe that hangs would otherwise hold the run once per attempt.
        verdict.expect(false, `counting ${what} again at the end of the run failed: ${describeThrown(error)}`);
        return;
      }
    }
  }
}

function resultOf(world: AuditWorld, { check, verdict, ms }: Ran): CheckResult {
  return {
    id: check.id,
    title: check.title,
    status: verdict.failures.length > 0 ? 'fail' : verdict.notRun === undefined ? 'pass' : 'not-run',
    evidence: evidenceOf(world, [
      ...verdict.failures,
      ...(verdict.notRun === undefined ? [] : [`not run: ${verdict.notRun}`]),
      ...verdict.notes,
    ]),
    fix: check.fix,
    ms,
  };
}

/** Every check not run, with the reason the run stopped before them: the setup failed, not the checks. */
function stoppedReport(world: AuditWorld, checks: AuditCheck[], reason: string, started: number): AuditReport {
  const [why = ''] = evidenceOf(world, [reason]);
  return {
    ok: false,
    stopped: why,
    counting: world.options.probe === undefined ? 'read-api' : 'probe',
    checks: checks.map((check) => ({
      id: check.id,
      title: check.title,
      status: 'not-run',
      evidence: [`not run: the audit stopped first: ${why}`],
      fix: check.fix,
      ms: 0,
    })),
    ms: Date.now() - started,
  };
}

async function pool<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const queue = items.map((item, index) => ({ item, index }));
  const lane = async () => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) results[job.index] = await work(job.item);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, lane));
  return results;
}

/** The longest unknown id quoted, once the secret is out (an id of megabytes is no line an error keeps). */
const ID_CHARS = 60;

function selected(only: string[] | undefined, hide: (text: string) => string): AuditCheck[] {
  if (only === undefined) return [...AUDIT_CHECKS];
  // A blank id (a list split from a variable ending in a comma) names nothing, as --only reads it.
  const ids = only.map((id) => id.trim()).filter((id) => id !== '');
  // An empty list (an unset variable in CI) would audit nothing and pass.
  if (ids.length === 0) {
    throw new TypeError(
      'auditIntegration: `only` names no check: list check ids (AUDIT_CHECK_IDS), or leave it out to run every check.',
    );
  }
  const unknown = ids.filter((id) => !AUDIT_CHECKS.some((check) => check.id === id));
  if (unknown.length > 0) {
    // The ids are the integrator's text: a pasted secret is never quoted back.
    const quoted = unknown
      .map((id) => hide(id))
      .map((id) => (id.length > ID_CHARS ? `${id.slice(0, ID_CHARS)}...` : id));
    throw new TypeError(
      `auditIntegration: unknown check id(s) in \`only\`: ${quoted.join(', ')}. Known: ${AUDIT_CHECKS.map((c) => c.id).join(', ')}.`,
    );
  }
  return AUDIT_CHECKS.filter((check) => ids.includes(check.id));
}

/** Runs the audit; resolves with the report (a failed check, or no check run, does not reject: read `report.ok`). */
export async function auditIntegration(options: AuditOptions): Promise<AuditReport> {
  const resolved = resolveAuditOptions(options);
  const checks = selected(resolved.only, secretHider(options));
  const world = new AuditWorld(resolved);
  const started = Date.now();
  const stop = (await world.chooseClientAddresses()) ?? (await confirmEmulator(world));
  if (stop !== undefined) return stoppedReport(world, checks, stop, started);
  const ran: Ran[] = [];
  const phase = (name: AuditCheck['phase']) => checks.filter((check) => check.phase === name);
  ran.push(...(await pool(phase('concurrent'), resolved.concurrency, (c) => runCheck(world, c))));
  for (const check of [...phase('alone'), ...phase('last')]) {
    const done = await runCheck(world, check);
    // A count every user adds to is read again before the next check adds to it.
    await countAgain(world, [done], (count) => count.shared === true);
    ran.push(done);
  }
  await countAgain(world, ran, (count) => count.shared !== true);
  const results = ran.map((r) => resultOf(world, r));
  const order = (id: string) => checks.findIndex((check) => check.id === id);
  results.sort((a, b) => order(a.id) - order(b.id));
  return {
    // Nothing checked is no pass: every check chosen needed an option not given (or an unreachable host).
    ok: results.every((result) => result.status !== 'fail') && results.some((result) => result.status === 'pass'),
    counting: resolved.probe === undefined ? 'read-api' : 'probe',
    checks: results,
    ms: Date.now() - started,
  };
}
