/**
 * Each country's counts as this instance's checks last read them, this hour: what a start's sure
 * limits (sureLimitsFor) take the country's thresholds from, as a country's thresholds only grow
 * within the hour. Bounded: one entry per country.
 */
import type { PumpingCount } from '../store/types.ts';

/** More entries than there are countries (and the key of a number no country holds): emptied past it. */
const MOST_COUNTRIES = 512;

export class EarlierCountryCounts {
  private readonly byCountry = new Map<string, { hour: number; count: PumpingCount }>();

  /** The country's counts read earlier in `hour`, if any. */
  get(country: string, hour: number): PumpingCount | undefined {
    const kept = this.byCountry.get(country);
    return kept !== undefined && kept.hour === hour ? kept.count : undefined;
  }

  /** Keeps a reading of the country made in `hour`; any reading of the hour is as good a floor as a later one. */
  keep(country: string, hour: number, count: PumpingCount | undefined): void {
    if (count === undefined) return;
    if (this.byCountry.size >= MOST_COUNTRIES && !this.byCountry.has(country)) this.byCountry.clear();
    this.byCountry.set(country, { hour, count });
  }
}
