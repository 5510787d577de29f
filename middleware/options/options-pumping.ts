/** The `pumping` option as the kit's options check it: its keys like every group's, then its values. */
import {
  PUMPING_OPTION_KEYS,
  resolvePumping,
  THRESHOLD_KINDS,
  type ResolvedPumping,
} from '../pumping/pumping-options.ts';
import { checkKnownKeys, isRecord, type OptionProblems } from './option-problems.ts';

/** A key that is no option, at any level of `pumping`: reported with the name it likely meant. */
function checkPumpingKeys(problems: OptionProblems, given: unknown): void {
  if (!isRecord(given)) return;
  checkKnownKeys(problems, 'pumping', given, PUMPING_OPTION_KEYS.pumping);
  if (isRecord(given.alwaysAllow)) {
    checkKnownKeys(problems, 'pumping.alwaysAllow', given.alwaysAllow, PUMPING_OPTION_KEYS.alwaysAllow);
  }
  const thresholds = given.thresholds;
  if (!isRecord(thresholds)) return;
  checkKnownKeys(problems, 'pumping.thresholds', thresholds, PUMPING_OPTION_KEYS.thresholds);
  for (const kind of THRESHOLD_KINDS) {
    const own = thresholds[kind];
    if (isRecord(own)) checkKnownKeys(problems, `pumping.thresholds.${kind}`, own, PUMPING_OPTION_KEYS.kind);
  }
}

/** The SMS pumping rules' options, resolved; their problems join the others. */
export function checkPumping(
  problems: OptionProblems,
  options: { pumping?: unknown; store?: unknown },
): ResolvedPumping {
  checkPumpingKeys(problems, options.pumping);
  // A mode named on a store without the counters would protect nothing.
  const counted = isRecord(options.store) && isRecord(options.store.pumping);
  const { resolved, problems: found } = resolvePumping(options.pumping, counted);
  for (const problem of found) problems.add(problem);
  return resolved;
}
