/**
 * A quick reading of a number that no country of its shared calling code holds (+1 555 01xx, the
 * fictional range apps test with): for such a number the parser tries every country of the code
 * (25 for +1), building a RegExp for each pattern on every call, and finds none. The same decisions,
 * made with the metadata's patterns compiled once (kept by calling code, never a number), answer it
 * in a few microseconds. Anything a country might claim, or that the parser would rewrite, is left
 * to the parser: the answer is the parser's or none.
 */
import { Metadata } from 'libphonenumber-js/max';

/** The types getNumberType tries after FIXED_LINE, in its order. */
const TYPES = [
  'FIXED_LINE',
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
] as const;

interface TypePattern {
  lengths: readonly number[] | undefined;
  whole: RegExp;
}

/** One country's numbering plan, as the parser's country search reads it. */
interface CountryPlan {
  /** Matched at the national number's start, a country with them claims it. */
  leadingDigits: RegExp | undefined;
  /** The country's whole national pattern, then each type's. */
  general: RegExp;
  types: TypePattern[];
}

interface SharedCode {
  /** The code's main country's national prefix for parsing, anchored: the parser strips or rewrites what it matches. */
  prefix: RegExp | undefined;
  /** In the metadata's order, the main country first. */
  countries: CountryPlan[];
}

/** The parts of the metadata's API (untyped by the library) that its parser reads. */
interface PlanType {
  pattern(): string;
  possibleLengths(): readonly number[] | undefined;
}
interface NumberingPlan {
  leadingDigits(): string | undefined;
  nationalNumberPattern(): string;
  nationalPrefixForParsing(): string | undefined;
  type(name: string): PlanType | undefined;
}
interface MetadataReads {
  /** A country ("US") or a calling code ("1": its main country's plan). */
  selectNumberingPlan(countryOrCode: string): void;
  numberingPlan: NumberingPlan;
  getCountryCodesForCallingCode(code: string): readonly string[] | undefined;
  isNonGeographicCallingCode(code: string): boolean;
  hasCallingCode(code: string): boolean;
}

const metadata = new Metadata() as unknown as MetadataReads;
/** By calling code: a plan for each code of several countries, null for any other. */
const sharedCodes = new Map<string, SharedCode | null>();

const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`);

function countryPlan(country: string): CountryPlan {
  metadata.selectNumberingPlan(country);
  const plan = metadata.numberingPlan;
  const leadingDigits = plan.leadingDigits();
  const types: TypePattern[] = [];
  for (const name of TYPES) {
    const type = plan.type(name);
    const pattern = type?.pattern();
    // A type without a pattern never matches (getNumberType's isNumberTypeEqualTo).
    if (type !== undefined && pattern) types.push({ lengths: type.possibleLengths(), whole: whole(pattern) });
  }
  return {
    leadingDigits: leadingDigits ? new RegExp(`^(?:${leadingDigits})`) : undefined,
    general: whole(plan.nationalNumberPattern()),
    types,
  };
}

function sharedCode(code: string): SharedCode | null {
  const known = sharedCodes.get(code);
  if (known !== undefined) return known;
  const countries = metadata.getCountryCodesForCallingCode(code);
  let built: SharedCode | null = null;
  if (countries !== undefined && countries.length > 1 && !metadata.isNonGeographicCallingCode(code)) {
    const plans = countries.map(countryPlan);
    // The parser strips a national prefix by the main country's rules (the code's plan).
    metadata.selectNumberingPlan(code);
    const prefix = metadata.numberingPlan.nationalPrefixForParsing();
    built = { prefix: prefix ? new RegExp(`^(?:${prefix})`) : undefined, countries: plans };
  }
  sharedCodes.set(code, built);
  return built;
}

/** Whether the parser's getNumberType would give the national number any type in this country. */
function typed(national: string, plan: CountryPlan): boolean {
  if (!plan.general.test(national)) return false;
  return plan.types.some(
    ({ lengths, whole: pattern }) =>
      (lengths === undefined || lengths.includes(national.length)) && pattern.test(national),
  );
}

const E164 = /^\+[1-9]\d{6,14}$/;

/**
 * True when the parser reads `e164` as it is, of its calling code but of no country and no type
 * (a number of that code, not of no country's code); false when it may not, or this cannot tell.
 */
export function isUnplacedNumber(e164: string): boolean {
  if (!E164.test(e164)) return false;
  // Calling codes are prefix-free: the parser takes the first of one to three digits it knows.
  for (let length = 1; length <= 3; length++) {
    const code = e164.slice(1, 1 + length);
    if (!metadata.hasCallingCode(code)) continue;
    const shared = sharedCode(code);
    if (shared === null) return false;
    const national = e164.slice(1 + length);
    if (shared.prefix?.test(national)) return false;
    // The parser's country search (getCountryByNationalNumber)...
    for (const plan of shared.countries) {
      if (plan.leadingDigits === undefined ? typed(national, plan) : plan.leadingDigits.test(national)) return false;
    }
    // ...and the type a number of no country is given: its main country's (typed above unless it has leading digits).
    const [main] = shared.countries;
    return main === undefined || main.leadingDigits === undefined || !typed(national, main);
  }
  return false;
}
