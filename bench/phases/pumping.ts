/**
 * The pumping phase: a simulated month (pumping-model.ts) through four policies, each behind
 * today's start budgets: the budgets alone (today's kit), Authgear's published rules as written
 * (unverified per phone country and per IP against thresholds of 0.2 x verified, floors 20 a day
 * and 3 an hour per country, 10 and 5 per IP, more than 3 countries per IP), the kit's rules
 * (its own decision code, `judge`, on the same counts), and the kit's rules with the app's
 * challenge, which every attack start passes (a solving service) and real users pass 95 % of the time. Counters are hourly buckets as the stores
 * keep them, in memory so the month runs in seconds; a code entered counts 90 s after its text.
 * Figures per attack: texts and cost spent on attack numbers, time to contain, legitimate starts
 * refused (overall and in the attacked country or block). Run twice: the figures must be equal.
 */
import { log } from '../measure.ts';
import { attacks, legitimateTraffic, type StartEvent } from './pumping-model.ts';
import { POLICIES, round, runPolicy, SEED, START, type Policy, type RunFigures } from './pumping-policy-run.ts';

export { keysOf, runPolicy, SEED, START, type Policy } from './pumping-policy-run.ts';

export interface PumpingScenario {
  attack: string;
  describe: string;
  byPolicy: Record<Policy, RunFigures>;
}

export interface PumpingFigures {
  seed: number;
  scenarios: PumpingScenario[];
  targets: { name: string; met: boolean; detail: string }[];
  /** Both runs gave the same figures. */
  repeatable: boolean;
}

/** The month's legitimate traffic with one attack's starts among it, in time order. */
export function monthWith(attack: { events: StartEvent[] }): StartEvent[] {
  return [...legitimateTraffic(SEED, START), ...attack.events].sort((a, b) => a.at - b.at);
}

function simulate(): PumpingScenario[] {
  const legit = legitimateTraffic(SEED, START);
  const quiet: PumpingScenario = {
    attack: '-',
    describe: 'no attack: the month of legitimate traffic alone',
    byPolicy: Object.fromEntries(POLICIES.map((p) => [p, runPolicy(p, legit, undefined)])) as Record<
      Policy,
      RunFigures
    >,
  };
  const attacked = attacks(SEED, START).map(({ shape, events }) => {
    const all = [...legit, ...events].sort((a, b) => a.at - b.at);
    return {
      attack: shape.name,
      describe: shape.describe,
      byPolicy: Object.fromEntries(POLICIES.map((p) => [p, runPolicy(p, all, shape)])) as Record<Policy, RunFigures>,
    };
  });
  return [quiet, ...attacked];
}

function judgeTargets(scenarios: PumpingScenario[]): PumpingFigures['targets'] {
  const quiet = scenarios[0]!.byPolicy.kit;
  const targets = [
    {
      name: 'legitimate starts refused over the month <= 0.5 %',
      met: quiet.legitimateRefused <= 0.005 * quiet.legitimate,
      detail: `${quiet.legitimateRefused} of ${quiet.legitimate}`,
    },
  ];
  for (const { attack, byPolicy } of scenarios.slice(1)) {
    const { kit, authgear, budgets } = byPolicy;
    targets.push(
      {
        name: `(${attack}) attack cost <= Authgear's rules`,
        met: kit.attackCost <= authgear.attackCost,
        detail: `${kit.attackCost} vs ${authgear.attackCost}`,
      },
      {
        name: `(${attack}) attack cost <= a tenth of today's budgets`,
        met: kit.attackCost <= budgets.attackCost / 10,
        detail: `${kit.attackCost} vs ${round(budgets.attackCost / 10)}`,
      },
      {
        name: `(${attack}) legitimate refused in the attacked country < Authgear's (or none)`,
        met: kit.attackedCountryRefused === 0 || kit.attackedCountryRefused < authgear.attackedCountryRefused,
        detail: `${kit.attackedCountryRefused} vs ${authgear.attackedCountryRefused}`,
      },
      {
        name: `(${attack}) legitimate refused over the month <= 0.5 %`,
        met: kit.legitimateRefused <= 0.005 * kit.legitimate,
        detail: `${kit.legitimateRefused} of ${kit.legitimate}`,
      },
    );
  }
  return targets;
}

export function pumpingPhase(): PumpingFigures {
  log('pumping: a simulated month, five attacks, four policies (twice, to check the figures repeat)');
  const scenarios = simulate();
  const repeatable = JSON.stringify(simulate()) === JSON.stringify(scenarios);
  return { seed: SEED, scenarios, targets: judgeTargets(scenarios), repeatable };
}

/** The phase's table: one line per attack and policy, then the targets. */
export function pumpingLines(figures: PumpingFigures): string[] {
  const lines = [
    `SMS pumping (simulated month, seed ${figures.seed}; figures repeat across runs: ${figures.repeatable ? 'yes' : 'NO'})`,
  ];
  lines.push(
    '  attack policy    attack texts   cost     first refusal  legit refused  in attacked country  in block  legit challenged',
  );
  for (const { attack, byPolicy } of figures.scenarios) {
    for (const policy of POLICIES) {
      const f = byPolicy[policy];
      const contained = f.minutesToContain === null ? 'never' : `${f.minutesToContain} min`;
      lines.push(
        `  ${attack.padEnd(6)} ${policy.padEnd(9)} ${String(f.attackTexts).padStart(12)} ${f.attackCost.toFixed(2).padStart(7)} ` +
          `${contained.padStart(16)} ${`${f.legitimateRefused} (${round((100 * f.legitimateRefused) / f.legitimate)} %)`.padStart(14)} ` +
          `${String(f.attackedCountryRefused).padStart(20)} ${String(f.attackedBlockRefused).padStart(9)} ` +
          `${String(f.legitimateChallenged).padStart(17)}`,
      );
    }
  }
  for (const target of figures.targets)
    lines.push(`  ${target.met ? 'met   ' : 'MISSED'} ${target.name}: ${target.detail}`);
  return lines;
}

// Run alone: `npx tsx bench/phases/pumping.ts` prints the table.
if (process.argv[1]?.endsWith('pumping.ts')) process.stdout.write(`${pumpingLines(pumpingPhase()).join('\n')}\n`);
