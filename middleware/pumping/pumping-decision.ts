/**
 * The decision before a text, from what the counters read: which rules one more text would break,
 * and whether an operator blocked one of its keys. Operators' releases lift a key's rules; their
 * blocks refuse whatever the counts say. Pure.
 */
import type { PumpingReading } from '../store/types.ts';
import type { StartKeys } from './pumping-keys.ts';
import { trippedBy, type PumpingThresholds } from './pumping-rules.ts';

export interface Verdict {
  /** The rules tripped (country_hourly, block_daily, address_countries, blocked, ...); empty when none. */
  reasons: string[];
  /** An operator blocked one of the start's keys: refused in every mode. */
  blocked: boolean;
}

/** The kinds of key with thresholds, in the order the counters come back (StartKeys.keys). */
const JUDGED = ['country', 'block', 'address'] as const;

export function judge(reading: PumpingReading, start: StartKeys, thresholds: PumpingThresholds, now: number): Verdict {
  const ruleOn = (dimension: string) => reading.rules.find((r) => r.dimension === dimension)?.rule;
  const blocked = reading.rules.some((r) => r.rule === 'block');
  const reasons = JUDGED.flatMap((kind, index) => {
    const count = reading.counts[index];
    if (count === undefined || ruleOn(kind) === 'allow') return [];
    return trippedBy(kind, count, thresholds[kind], now);
  });
  if (ruleOn('address') !== 'allow' && reading.unverifiedCountries > thresholds.addressCountries) {
    reasons.push('address_countries');
  }
  return { reasons: blocked ? ['blocked', ...reasons] : reasons, blocked };
}
