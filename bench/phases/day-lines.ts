/** The simulated day's section of the bench report. */
import { pad } from '../measure.ts';
import { OUTCOME_CLASSES, type DayFigures, type ScheduleFigures } from './day-model.ts';

/** Reads per attempt by outcome class: the default schedule, the previous one, and a naive every-minute cron. */
export function dayLines(d: DayFigures): string[] {
  const widths = [36, 12, 12, 12];
  const out = [
    `Simulated day: ${d.starts} starts over 24 h on a clock that moves only when told (seed ${d.seed}), sweep every ${d.sweepIntervalMs / 1000} s, read limit ${d.readLimitPerSecond}/s on the day's clock; load average ${d.loadAverage.join(' ')}`,
    pad(['status reads per attempt', 'kit', 'baseline', 'naive/min'], widths),
  ];
  for (const cls of OUTCOME_CLASSES) {
    out.push(
      pad(
        [
          `${cls} (${d.kit.classes[cls].attempts})`,
          d.kit.classes[cls].readsPerAttempt,
          d.baseline.classes[cls].readsPerAttempt,
          d.naive.classes[cls].readsPerAttempt,
        ],
        widths,
      ),
    );
  }
  const delay = (f: ScheduleFigures) => {
    const v = f.classes.verifiedNeverReturns;
    return `${v.delayMedianS}/${v.delayP95S}/${v.delayMaxS}`;
  };
  out.push(pad(['verified->fulfilled s (med/p95/max)', delay(d.kit), delay(d.baseline), delay(d.naive)], widths));
  out.push(
    pad(
      [
        'peak reads/s at 100k starts/day',
        d.kit.peakReadsPerSecondAt100k,
        d.baseline.peakReadsPerSecondAt100k,
        d.naive.peakReadsPerSecondAt100k,
      ],
      widths,
    ),
  );
  out.push(
    `429s: kit ${d.kit.rateLimited}, baseline ${d.baseline.rateLimited}; runs stopped on their time budget: kit ${d.kit.runsStopped}, ` +
      `baseline ${d.baseline.runsStopped}; wall: kit ${d.kit.wallSeconds} s, baseline ${d.baseline.wallSeconds} s`,
  );
  return out;
}
