/**
 * What a text costs, per destination country, so tests and the bench can say what an attack cost.
 * The defaults are of the order of public per-message prices, rounded, and meant for comparisons
 * only: give your own table (your provider's) when the figure matters.
 */
import { isSupportedCountry } from 'libphonenumber-js/max';

/** Prices per text, in one currency (the defaults are US dollars). */
export interface SmsPrices {
  /** A country not in `countries`. */
  default: number;
  /** By ISO 3166-1 alpha-2 code of the number's country. */
  countries: Readonly<Record<string, number>>;
}

export const DEFAULT_SMS_PRICES: SmsPrices = {
  default: 0.1,
  countries: {
    US: 0.008,
    CA: 0.008,
    GB: 0.04,
    FR: 0.08,
    DE: 0.09,
    ES: 0.08,
    IT: 0.08,
    NL: 0.1,
    BR: 0.05,
    IN: 0.01,
    NG: 0.3,
    PK: 0.3,
    ID: 0.4,
    VN: 0.3,
    BD: 0.3,
    PH: 0.2,
  },
};

const isPricedCountry = (code: string): boolean =>
  code === 'ZZ' || (/^[A-Z]{2}$/.test(code) && isSupportedCountry(code));

const isPrice = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** A price table given as an option: `countries` merged over the defaults, `default` replacing theirs. */
export function validateSmsPrices(value: unknown): SmsPrices {
  const given = (typeof value === 'object' && value !== null ? value : undefined) as Partial<SmsPrices> | undefined;
  const countries = given?.countries ?? {};
  const fix =
    "smsPrices must be { default?: 0.1, countries?: { NG: 0.3 } }: prices are numbers >= 0, countries ISO codes such as 'NG'.";
  if (given === undefined || typeof countries !== 'object' || countries === null) throw new Error(fix);
  if (given.default !== undefined && !isPrice(given.default)) throw new Error(fix);
  for (const [code, price] of Object.entries(countries)) {
    // A code no number belongs to ('UK': the United Kingdom is 'GB') would never be read.
    if (!isPricedCountry(code) || !isPrice(price)) throw new Error(fix);
  }
  return {
    default: given.default ?? DEFAULT_SMS_PRICES.default,
    countries: { ...DEFAULT_SMS_PRICES.countries, ...countries },
  };
}
