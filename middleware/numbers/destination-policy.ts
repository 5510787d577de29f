/**
 * Which numbers the kit texts at all, checked before any service call: every text costs the
 * integrator money, and the numbers an attacker is paid for (premium-rate, shared-cost) are ones
 * no person reads a code on. Countries by allow- and refuse-list; types refused by default:
 *   PREMIUM_RATE, SHARED_COST  the caller pays the number's owner: the SMS pumping payout;
 *   PERSONAL_NUMBER            forwarding numbers (UK 070, DE 0700) whose owner takes a share of
 *                              what the caller pays: the same payout, and a phone they only forward to;
 *   TOLL_FREE, UAN             service numbers of businesses, not a person's phone;
 *   VOICEMAIL, PAGER           nobody reads a code there in time.
 * FIXED_LINE and VOIP stay allowed (some landlines read texts aloud, many people live on VoIP
 * numbers): `refuseTypes` adds types, `allowTypes` takes defaults away.
 * Numbers of no country (satellite phones, international networks: +881, +870, +882, +883) are
 * refused unless `allowCountries` names NO_COUNTRY ('ZZ', as the SMS pumping rules count them):
 * they are among the dearest texts there are, bought by almost no one's users, and a classic
 * pumping destination.
 */
import { NO_COUNTRY, type PhoneNumberType, type ReadNumber } from './parse-number.ts';

export const PHONE_NUMBER_TYPES: readonly PhoneNumberType[] = [
  'MOBILE',
  'FIXED_LINE',
  'FIXED_LINE_OR_MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
];

export const DEFAULT_REFUSED_TYPES: readonly PhoneNumberType[] = [
  'PREMIUM_RATE',
  'SHARED_COST',
  'PERSONAL_NUMBER',
  'TOLL_FREE',
  'UAN',
  'VOICEMAIL',
  'PAGER',
];

/** The kit's `destinationPolicy` option. */
export interface DestinationPolicyOptions {
  /**
   * Only numbers of these countries (ISO 3166-1 alpha-2, e.g. ['FR', 'BE']); default every country.
   * 'ZZ' names numbers of no country (satellite phones, international networks), refused otherwise.
   */
  allowCountries?: readonly string[];
  /** Never numbers of these countries ('ZZ': every number of no country, fictional ranges included). */
  refuseCountries?: readonly string[];
  /** Types refused on top of the defaults (e.g. ['FIXED_LINE', 'VOIP']). */
  refuseTypes?: readonly PhoneNumberType[];
  /** Default-refused types to allow after all (e.g. ['TOLL_FREE']). */
  allowTypes?: readonly PhoneNumberType[];
}

/** Why a number was refused: the log line's and the counter's reason, never shown to the user. */
export type RefusalReason = 'country' | 'type' | 'unknown_country' | 'no_country';

/** The policy, resolved. */
export interface DestinationPolicy {
  allowCountries: ReadonlySet<string> | undefined;
  refuseCountries: ReadonlySet<string>;
  refusedTypes: ReadonlySet<PhoneNumberType>;
}

export function resolvePolicy(options: DestinationPolicyOptions = {}): DestinationPolicy {
  const refused = new Set<PhoneNumberType>([...DEFAULT_REFUSED_TYPES, ...(options.refuseTypes ?? [])]);
  for (const type of options.allowTypes ?? []) refused.delete(type);
  return {
    allowCountries: options.allowCountries === undefined ? undefined : new Set(options.allowCountries),
    refuseCountries: new Set(options.refuseCountries ?? []),
    refusedTypes: refused,
  };
}

/**
 * The reason a number is refused, or undefined when it may be texted. A number the metadata places
 * in no country is judged as 'ZZ' by both lists: an allow-list promises that nothing else is
 * texted. Without an allow-list one of a country's calling code passes (the metadata goes stale,
 * and apps test with fictional ranges); one whose calling code is no country's does not.
 */
export function refusalOf(policy: DestinationPolicy, number: ReadNumber): RefusalReason | undefined {
  if (number.country === undefined) {
    if (policy.refuseCountries.has(NO_COUNTRY)) return 'country';
    if (policy.allowCountries !== undefined) {
      if (!policy.allowCountries.has(NO_COUNTRY)) return 'unknown_country';
    } else if (number.noCountry) {
      return 'no_country';
    }
  } else if (
    policy.refuseCountries.has(number.country) ||
    (policy.allowCountries !== undefined && !policy.allowCountries.has(number.country))
  ) {
    return 'country';
  }
  if (number.type !== undefined && policy.refusedTypes.has(number.type)) return 'type';
  return undefined;
}
