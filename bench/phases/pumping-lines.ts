/** The report's SMS pumping sections: the simulated month, its replay through the stores, the rules' cost to a start. */
import type { Comparison } from './interleaved.ts';
import { pumpingLines, type PumpingFigures } from './pumping.ts';
import { pumpingCostTitle, pumpingCountedLine, type PumpingCostFigures } from './pumping-cost.ts';
import { pumpingReplayLines, type ReplayFigures } from './pumping-replay.ts';

/** One section per pumping phase that ran; `table` prints a comparison under its title. */
export function pumpingSections(
  results: { pumping?: PumpingFigures; pumpingReplay?: ReplayFigures; pumpingCost?: PumpingCostFigures },
  table: (c: Comparison, title: string) => string,
): string[][] {
  const { pumping, pumpingReplay, pumpingCost } = results;
  return [
    ...(pumping === undefined ? [] : [pumpingLines(pumping)]),
    ...(pumpingReplay === undefined ? [] : [pumpingReplayLines(pumpingReplay)]),
    ...(pumpingCost === undefined
      ? []
      : [
          pumpingCost.runs.flatMap((run) => [
            table(run.comparison, pumpingCostTitle(pumpingCost, run)),
            pumpingCountedLine(run),
          ]),
        ]),
  ];
}
