/** Checks of the options about typed numbers: `defaultCountry` and `destinationPolicy`. */
import { isCountryOrNone, isKnownCountry } from '../numbers/parse-number.ts';
import {
  PHONE_NUMBER_TYPES,
  resolvePolicy,
  type DestinationPolicy,
  type DestinationPolicyOptions,
} from '../numbers/destination-policy.ts';
import { checkKnownKeys, isFunction, optionGroup, quote, type OptionProblems } from './option-problems.ts';
import type { DefaultCountryChooser } from './options.ts';

const COUNTRY_HINT = "an ISO 3166-1 alpha-2 code in capitals, such as 'GB' or 'FR'";

function checkDefaultCountry(problems: OptionProblems, value: unknown): string | DefaultCountryChooser | undefined {
  if (value === undefined || isKnownCountry(value)) return value;
  if (isFunction(value)) return value as DefaultCountryChooser;
  problems.add(
    `\`defaultCountry\` must be ${COUNTRY_HINT}, or a function (req) => such a code or undefined: got ${quote(value)}.`,
  );
  return undefined;
}

function countries(problems: OptionProblems, name: string, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every(isCountryOrNone)) {
    problems.add(
      `\`destinationPolicy.${name}\` must be an array of ${COUNTRY_HINT}, or 'ZZ' for numbers of no country (satellite phones, international networks): got ${quote(value)}.`,
    );
    return undefined;
  }
  return value;
}

function types(problems: OptionProblems, name: string, value: unknown): DestinationPolicyOptions['refuseTypes'] {
  if (value === undefined) return undefined;
  const known = (type: unknown) => PHONE_NUMBER_TYPES.some((t) => t === type);
  if (!Array.isArray(value) || !value.every(known)) {
    problems.add(
      `\`destinationPolicy.${name}\` must be an array of number types (${PHONE_NUMBER_TYPES.join(', ')}): got ${quote(value)}.`,
    );
    return undefined;
  }
  return value as DestinationPolicyOptions['refuseTypes'];
}

function checkDestinationPolicy(problems: OptionProblems, value: unknown): DestinationPolicy {
  const given = optionGroup(problems, 'destinationPolicy', value);
  checkKnownKeys(problems, 'destinationPolicy', given, [
    'allowCountries',
    'refuseCountries',
    'refuseTypes',
    'allowTypes',
  ]);
  const options: DestinationPolicyOptions = {
    allowCountries: countries(problems, 'allowCountries', given.allowCountries),
    refuseCountries: countries(problems, 'refuseCountries', given.refuseCountries),
    refuseTypes: types(problems, 'refuseTypes', given.refuseTypes),
    allowTypes: types(problems, 'allowTypes', given.allowTypes),
  };
  if (options.allowCountries?.length === 0) {
    problems.add(
      '`destinationPolicy.allowCountries` is empty, so no number could ever be texted: list countries, or leave it out.',
    );
  }
  return resolvePolicy(options);
}

/** `defaultCountry` and `destinationPolicy`, checked and resolved. */
export function checkNumberOptions(
  problems: OptionProblems,
  defaultCountry: unknown,
  destinationPolicy: unknown,
): { defaultCountry: string | DefaultCountryChooser | undefined; destinationPolicy: DestinationPolicy } {
  return {
    defaultCountry: checkDefaultCountry(problems, defaultCountry),
    destinationPolicy: checkDestinationPolicy(problems, destinationPolicy),
  };
}
