/**
 * The pumping phase's in-memory counters, as the stores keep them (sent, verified and refused per
 * key and hour, the countries each address texted) and today's start budgets, so a simulated month
 * runs in seconds.
 */
import type { PumpingCount } from '../../middleware/store/types.ts';
import { DAY_MS, HOUR_MS, type StartEvent } from './pumping-model.ts';

/** Sent and verified per hour of the month, for one key (only the hours it was texted in). */
export class Buckets {
  private readonly hours = new Map<number, { sent: number; verified: number; refused: number }>();
  private maxAt = -1;
  private max = 0;

  constructor(private readonly firstHour: number) {}

  at(hour: number): { sent: number; verified: number; refused: number } {
    let bucket = this.hours.get(hour);
    if (bucket === undefined) {
      bucket = { sent: 0, verified: 0, refused: 0 };
      this.hours.set(hour, bucket);
    }
    return bucket;
  }

  private sum(from: number, to: number, field: 'sent' | 'verified' | 'refused'): number {
    let total = 0;
    for (let h = Math.max(from, this.firstHour); h <= to; h++) total += this.hours.get(h)?.[field] ?? 0;
    return total;
  }

  count(hour: number): PumpingCount {
    const verifiedDay = this.sum(hour - 23, hour, 'verified');
    return {
      sentThisHour: this.sum(hour, hour, 'sent'),
      verifiedThisHour: this.sum(hour, hour, 'verified'),
      sentLastHour: this.sum(hour - 1, hour - 1, 'sent'),
      verifiedLastHour: this.sum(hour - 1, hour - 1, 'verified'),
      sentLastDay: this.sum(hour - 23, hour, 'sent'),
      verifiedLastDay: verifiedDay,
      maxVerifiedDay: Math.max(this.maxVerified(hour), verifiedDay),
      refusedThisHour: this.sum(hour, hour, 'refused'),
      refusedLastHour: this.sum(hour - 1, hour - 1, 'refused'),
    };
  }

  /** The best rolling day of the 14 back (recomputed once an hour: the current day is added live). */
  private maxVerified(hour: number): number {
    if (this.maxAt === hour) return this.max;
    let best = 0;
    for (let day = 1; day < 14; day++)
      best = Math.max(best, this.sum(hour - day * 24 - 23, hour - day * 24, 'verified'));
    this.maxAt = hour;
    this.max = best;
    return best;
  }
}

/** The counters of one run: per key, and per address the countries it texted. */
export class Counters {
  private readonly keys = new Map<string, Buckets>();
  private readonly byAddress = new Map<string, { hour: number; country: string; verified: boolean }[]>();

  buckets(key: string, hour: number): Buckets {
    let found = this.keys.get(key);
    if (found === undefined) {
      found = new Buckets(hour);
      this.keys.set(key, found);
    }
    return found;
  }

  unverifiedCountries(address: string, hour: number): number {
    const sends = (this.byAddress.get(address) ?? []).filter((s) => s.hour > hour - 24);
    const verified = new Set(sends.filter((s) => s.verified).map((s) => s.country));
    return new Set(sends.filter((s) => !verified.has(s.country)).map((s) => s.country)).size;
  }

  send(keys: string[], address: string, country: string, hour: number) {
    for (const key of keys) this.buckets(key, hour).at(hour).sent += 1;
    const record = { hour, country, verified: false };
    const list = this.byAddress.get(address) ?? [];
    list.push(record);
    this.byAddress.set(address, list);
    return () => {
      for (const key of keys) this.buckets(key, hour).at(hour).verified += 1;
      record.verified = true;
    };
  }
}

/** Today's start budgets as the store counts them: fixed windows from a key's first start. */
export class Budgets {
  private readonly windows = new Map<string, { spent: number; endsAt: number; members?: Set<string> }>();

  allows(event: StartEvent): boolean {
    const budgets: [string, number, number, string?][] = [
      [`user:${event.user}`, 10, HOUR_MS],
      [`number:${event.number}`, 5, 10 * 60_000],
      [`ip:${event.address}`, 30, HOUR_MS],
      [`numbers:${event.user}`, 5, DAY_MS, event.number],
    ];
    const open = budgets.map(([key, points, ms, member]) => {
      let window = this.windows.get(key);
      if (window === undefined || window.endsAt <= event.at) window = { spent: 0, endsAt: event.at + ms };
      const counted = member !== undefined && (window.members?.has(member) ?? false);
      return { key, window, full: !counted && window.spent >= points, counted, member };
    });
    if (open.some((b) => b.full)) return false;
    for (const { key, window, counted, member } of open) {
      if (counted) continue;
      window.spent += 1;
      if (member !== undefined) (window.members ??= new Set()).add(member);
      this.windows.set(key, window);
    }
    return true;
  }
}
