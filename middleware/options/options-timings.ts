/** The kit options that time it: the landing's re-checks, the sweep's first read and cap, each callback's deadline. */
import { PENDING_REUSE_MS } from '../client/coalesce.ts';
import { DEFAULT_HOOK_TIMEOUTS, HOOK_NAMES, type HookTimeouts } from '../deadline.ts';
import { checkReadCap } from '../sweep/sweep-options.ts';
import { checkKnownKeys, integerInRange, nonNegative, optionGroup, type OptionProblems } from './option-problems.ts';
import type { VerificationKitOptions } from './options.ts';

/** Each callback's deadline: the defaults, with the given ones over them. */
export function checkHookTimeouts(problems: OptionProblems, value: unknown): HookTimeouts {
  const given = optionGroup(problems, 'hookTimeouts', value);
  checkKnownKeys(problems, 'hookTimeouts', given, HOOK_NAMES);
  const timeouts: Record<string, number> = {};
  for (const name of HOOK_NAMES) {
    timeouts[name] = integerInRange(problems, `hookTimeouts.${name}`, given[name], {
      min: 1,
      max: 600_000,
      fallback: DEFAULT_HOOK_TIMEOUTS[name],
      unit: ' ms',
    });
  }
  return timeouts as HookTimeouts;
}

/** A pending answer reused as long as the re-check interval makes every re-check of a landing reuse it. */
function checkPendingReuse(
  problems: OptionProblems,
  landing: { pendingRechecks: number; pendingRecheckIntervalMs: number; pendingReuseMs: number },
): void {
  const { pendingRechecks, pendingRecheckIntervalMs: interval, pendingReuseMs: reuse } = landing;
  if (pendingRechecks === 0 || reuse === 0 || reuse < interval) return;
  const below = Math.max(0, Math.floor(interval * 0.8));
  problems.add(
    `\`landing.pendingReuseMs\` (${reuse} ms) must be below \`landing.pendingRecheckIntervalMs\` (${interval} ms): ` +
      "otherwise every re-check of a landing reuses the cached 'pending' and never reads the service. " +
      `Pass e.g. landing: { pendingReuseMs: ${below} }, or 0 to reuse nothing.`,
  );
}

export function checkTimings(problems: OptionProblems, o: Pick<VerificationKitOptions, 'landing' | 'sweep'>) {
  const given = optionGroup(problems, 'landing', o.landing);
  checkKnownKeys(problems, 'landing', given, [
    'pendingRechecks',
    'pendingRecheckIntervalMs',
    'refreshSeconds',
    'refreshWindowMs',
    'pendingReuseMs',
  ]);
  const sweep = optionGroup(problems, 'sweep', o.sweep);
  checkKnownKeys(problems, 'sweep', sweep, ['firstCheckAfterMs', 'maxReadsPerSecond']);
  const landing = {
    pendingRechecks: nonNegative(problems, 'landing.pendingRechecks', given.pendingRechecks, 3),
    pendingRecheckIntervalMs: nonNegative(
      problems,
      'landing.pendingRecheckIntervalMs',
      given.pendingRecheckIntervalMs,
      600,
    ),
    refreshSeconds: nonNegative(problems, 'landing.refreshSeconds', given.refreshSeconds, 3, false),
    refreshWindowMs: nonNegative(problems, 'landing.refreshWindowMs', given.refreshWindowMs, 5 * 60_000),
    pendingReuseMs: nonNegative(problems, 'landing.pendingReuseMs', given.pendingReuseMs, PENDING_REUSE_MS),
  };
  checkPendingReuse(problems, landing);
  return {
    landing,
    sweep: {
      firstCheckAfterMs: nonNegative(problems, 'sweep.firstCheckAfterMs', sweep.firstCheckAfterMs, 3 * 60_000),
      maxReadsPerSecond: checkReadCap(problems, sweep.maxReadsPerSecond, 'sweep.maxReadsPerSecond'),
    },
  };
}
