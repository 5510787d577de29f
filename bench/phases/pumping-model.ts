/**
 * The pumping phase's traffic: a month of legitimate starts (about 2,000 a day over 20 countries,
 * a daily and weekly rhythm, 75 to 95 % of codes entered, day 0 a launch with no history, day 20 a
 * spike at twice the traffic) and five attacks, each run on its own on top of it. Everything comes
 * from one seed: the same seed gives the same month.
 */
import { getExampleNumber, isValidPhoneNumber, type CountryCode } from 'libphonenumber-js/max';
import mobileExamples from 'libphonenumber-js/mobile/examples';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const DAYS = 30;
export const SPIKE_DAY = 20;
/** A code is entered this long after its text (when it is entered at all). */
export const VERIFY_LAG_MS = 90_000;

/** One start: who asks, from where, for which number. */
export interface StartEvent {
  at: number;
  country: string;
  number: string;
  address: string;
  user: string;
  /** Whether the code will be entered (never for an attack). */
  converts: boolean;
  attack: boolean;
}

export interface AttackShape {
  name: 'a' | 'b' | 'c' | 'd' | 'e';
  describe: string;
  /** The country (or block) whose legitimate users the attack could shut out. */
  country: string;
  block?: string;
}

/** A small, fast PRNG (mulberry32): the month depends on the seed alone. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Country, share of the traffic, code-entry rate, and the prefix its mobile numbers start with. */
const COUNTRIES: readonly (readonly [string, number, number, string])[] = [
  ['US', 0.2, 0.9, '+1202'],
  ['GB', 0.12, 0.88, '+447400'],
  ['IN', 0.1, 0.78, '+9198'],
  ['DE', 0.07, 0.92, '+49151'],
  ['FR', 0.07, 0.9, '+336'],
  ['BR', 0.06, 0.8, '+55119'],
  ['ES', 0.05, 0.88, '+346'],
  ['IT', 0.04, 0.87, '+393'],
  ['CA', 0.04, 0.9, '+1416'],
  ['MX', 0.04, 0.8, '+5255'],
  ['NL', 0.03, 0.93, '+316'],
  ['PL', 0.03, 0.89, '+4850'],
  ['AU', 0.03, 0.91, '+614'],
  ['JP', 0.025, 0.95, '+8190'],
  ['SE', 0.02, 0.94, '+4670'],
  ['TR', 0.02, 0.8, '+90532'],
  ['ZA', 0.015, 0.78, '+2782'],
  ['PH', 0.015, 0.75, '+63917'],
  ['NG', 0.005, 0.76, '+234803'],
  ['PK', 0.005, 0.77, '+92300'],
];

/** The month's countries: code, share of the traffic, code-entry rate, mobile prefix (for other phases' traffic). */
export function monthCountries(): { code: string; share: number; conversion: number; prefix: string }[] {
  return COUNTRIES.map(([code, share, conversion, prefix]) => ({ code, share, conversion, prefix }));
}

/** Starts per hour of the day, relative: quiet at night, busy in the evening. */
const HOUR_SHAPE = [
  0.2, 0.12, 0.08, 0.06, 0.08, 0.15, 0.35, 0.6, 0.85, 1, 1.05, 1.1, 1.15, 1.1, 1.05, 1.05, 1.1, 1.2, 1.35, 1.45, 1.4,
  1.1, 0.7, 0.4,
];
const HOUR_TOTAL = HOUR_SHAPE.reduce((a, b) => a + b, 0);

const digits = (rand: () => number, n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('');

const digitsByCountry = new Map<string, number>();

/** How many digits follow `prefix` in a mobile number of `country`: as many as in its example number. */
function digitsAfter(country: string, prefix: string): number {
  const known = digitsByCountry.get(`${country}${prefix}`);
  if (known !== undefined) return known;
  const example = getExampleNumber(country as CountryCode, mobileExamples);
  if (example === undefined) throw new Error(`No example mobile number for ${country}.`);
  const count = example.number.length - prefix.length;
  digitsByCountry.set(`${country}${prefix}`, count);
  return count;
}

/**
 * A valid mobile number of `country` starting with `prefix`, drawn again until libphonenumber-js
 * agrees: the kit counts a text under the country it reads from the number (one it cannot read
 * goes under ZZ), and blocks are as wide as the country's numbers make them.
 */
export function numberIn(rand: () => number, country: string, prefix: string): string {
  const count = digitsAfter(country, prefix);
  let number: string;
  do number = `${prefix}${digits(rand, count)}`;
  while (!isValidPhoneNumber(number, country as CountryCode));
  return number;
}

function pickCountry(rand: () => number): (typeof COUNTRIES)[number] {
  let r = rand();
  for (const country of COUNTRIES) {
    r -= country[1];
    if (r <= 0) return country;
  }
  return COUNTRIES[0]!;
}

/**
 * The share of legitimate starts made by a returning user: someone who entered a code earlier in
 * the month, now verifying the same number again (a sign-in on a new device, a step-up). The rest
 * are people verifying a number for the first time (sign-up, adding or changing a number).
 */
export const RETURNING_SHARE = 0.3;

/** Legitimate starts over the month, in time order, from `start`. */
export function legitimateTraffic(seed: number, start: number, perDay = 2000): StartEvent[] {
  const rand = random(seed);
  const events: StartEvent[] = [];
  /** Users whose code was entered, by the time it was: who may come back. */
  const verified: StartEvent[] = [];
  for (let day = 0; day < DAYS; day++) {
    const weekend = day % 7 === 5 || day % 7 === 6 ? 0.8 : 1;
    const today = perDay * weekend * (day === SPIKE_DAY ? 2 : 1) * (0.9 + rand() * 0.2);
    for (let hour = 0; hour < 24; hour++) {
      const count = Math.round((today * (HOUR_SHAPE[hour] ?? 1)) / HOUR_TOTAL);
      const hourStart = start + day * DAY_MS + hour * HOUR_MS;
      // Users verified before this hour began (their code entered a lag after their text).
      const earlier = verified.filter((e) => e.at + VERIFY_LAG_MS < hourStart);
      const thisHour: StartEvent[] = [];
      for (let n = 0; n < count; n++) {
        const at = hourStart + Math.floor(rand() * HOUR_MS);
        const address = `10.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`;
        const returning = rand() < RETURNING_SHARE && earlier.length > 0;
        const before = earlier[Math.floor(rand() * earlier.length)]!;
        const [country, , conversion, prefix] = returning
          ? COUNTRIES.find((c) => c[0] === before.country)!
          : pickCountry(rand);
        const event: StartEvent = {
          at,
          country,
          number: returning ? before.number : numberIn(rand, country, prefix),
          address,
          user: returning ? before.user : `u${Math.floor(rand() * 1e9)}`,
          converts: rand() < conversion,
          attack: false,
        };
        thisHour.push(event);
      }
      events.push(...thisHour);
      verified.push(...thisHour.filter((e) => e.converts));
    }
  }
  return events.sort((a, b) => a.at - b.at);
}

const ATTACK_COUNTRIES = ['NG', 'PK', 'ID', 'VN', 'BD', 'PH', 'KE', 'EG', 'UZ', 'KZ', 'LK', 'MM', 'KH', 'NP', 'TZ'];

/** Attack starts at `perHour` from `from` for `hours`, each made by `make`. */
function burst(
  rand: () => number,
  from: number,
  hours: number,
  perHour: number,
  make: (i: number) => Omit<StartEvent, 'at' | 'converts' | 'attack'>,
): StartEvent[] {
  const total = Math.round(hours * perHour);
  return Array.from({ length: total }, (_, i) => ({
    ...make(i),
    at: from + Math.floor(((i + rand()) / total) * hours * HOUR_MS),
    converts: false,
    attack: true,
  }));
}

const rotating = (rand: () => number) => ({
  address: `198.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`,
  user: `x${Math.floor(rand() * 1e9)}`,
});

/** The five attacks, each as its starts and what it aims at. */
export function attacks(seed: number, start: number): { shape: AttackShape; events: StartEvent[] }[] {
  const rand = random(seed ^ 0x5eed);
  const day = (d: number, h = 0) => start + d * DAY_MS + h * HOUR_MS;
  return [
    {
      shape: {
        name: 'a',
        describe: 'random numbers in one expensive country (NG), addresses and accounts rotated',
        country: 'NG',
      },
      events: burst(rand, day(15), 24, 300, () => ({
        country: 'NG',
        number: numberIn(rand, 'NG', '+234803'),
        ...rotating(rand),
      })),
    },
    {
      shape: {
        name: 'b',
        describe: 'adjacent numbers in one block of a big country (GB)',
        country: 'GB',
        block: '+447400123',
      },
      events: burst(rand, day(15, 8), 12, 200, (i) => ({
        country: 'GB',
        number: `+447400123${String(i % 1000).padStart(3, '0')}`,
        ...rotating(rand),
      })),
    },
    {
      shape: { name: 'c', describe: 'one address, many countries', country: 'NG' },
      events: burst(rand, day(15, 10), 6, 100, () => {
        const country = ATTACK_COUNTRIES[Math.floor(rand() * ATTACK_COUNTRIES.length)]!;
        return {
          country,
          number: `+9${digits(rand, 11)}`,
          address: '203.0.113.9',
          user: `x${Math.floor(rand() * 1e9)}`,
        };
      }),
    },
    {
      shape: { name: 'd', describe: 'a slow drip (15 a day) to one country (PK) for a week', country: 'PK' },
      events: burst(rand, day(10), 7 * 24, 15 / 24, () => ({
        country: 'PK',
        number: numberIn(rand, 'PK', '+92300'),
        ...rotating(rand),
      })),
    },
    {
      shape: { name: 'e', describe: 'random numbers in a big country (IN) on the spike day', country: 'IN' },
      events: burst(rand, day(SPIKE_DAY, 8), 12, 300, () => ({
        country: 'IN',
        number: numberIn(rand, 'IN', '+9198'),
        ...rotating(rand),
      })),
    },
  ];
}
