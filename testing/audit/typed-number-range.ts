/**
 * The numbers the audit types into an action with an entered destination: UK mobile numbers of one
 * range (+44 7400 100000 to +44 7400 199999), each typed once in a run, so each has its own
 * per-destination budget and the entered-number checks can search for each.
 */
import { randomInt } from 'node:crypto';

/** How many numbers the audit may type. */
const NUMBER_RANGE = 100_000;

/** A phone number's digits alone: "+44 7400 100001" and "+447400100001" are one number. */
export function digitsOf(phone: string): string {
  return phone.replace(/\D/g, '');
}

export class TypedNumberRange {
  #drawn = 0;
  readonly #typed = new Set<string>();

  /** A number of the range no start of this run typed before, in international form. */
  next(): string {
    if (this.#typed.size >= NUMBER_RANGE) throw new Error(`the audit typed all ${NUMBER_RANGE} numbers of its range`);
    for (;;) {
      this.#drawn += 1;
      const tail = (randomInt(0, NUMBER_RANGE / 10) * 10 + (this.#drawn % 10)).toString().padStart(5, '0');
      const number = `+44 7400 1${tail}`;
      if (this.#typed.has(number)) continue;
      this.#typed.add(number);
      return number;
    }
  }
}
