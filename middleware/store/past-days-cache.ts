/**
 * The most texts a pumping key had verified in one rolling day of the 13 before the last 24 hours,
 * kept for the hour it was read in. Those days are over: only a code entered more than a day after
 * its text could still move them, and that is rare and moves a threshold by one. Reading them once
 * an hour per key instead of at every start spares each start a scan of 312 hourly rows per key.
 * Both stores keep one; the last 24 hours are always read live.
 */
const MOST_KEYS = 50_000;

export interface PastDaysCache {
  get(dimension: string, key: string, hour: number): number | undefined;
  set(dimension: string, key: string, hour: number, most: number): void;
}

export function pastDaysCache(): PastDaysCache {
  let hourKept = Number.NaN;
  const most = new Map<string, number>();
  const forHour = (hour: number) => {
    // A new hour, or more keys than an hour of real traffic has: start again.
    if (hour !== hourKept || most.size >= MOST_KEYS) {
      most.clear();
      hourKept = hour;
    }
  };
  return {
    get(dimension, key, hour) {
      forHour(hour);
      return most.get(`${dimension} ${key}`);
    },
    set(dimension, key, hour, value) {
      forHour(hour);
      most.set(`${dimension} ${key}`, value);
    },
  };
}
