/**
 * The service's connection options from environment variables, in one call:
 *
 *   createVerificationKit({ ...verifyOptionsFromEnv(), store, actions, resolveUser })
 *
 * reads VERIFY_BASE_URL, VERIFY_CLIENT_ID, VERIFY_CLIENT_SECRET and VERIFY_RETURN_URL. Every
 * missing variable is reported at once; the secret's value is never echoed.
 */
import { OptionProblems } from './option-problems.ts';

/** The variables verifyOptionsFromEnv reads, by the option each one fills. */
export const VERIFY_ENV = {
  baseUrl: 'VERIFY_BASE_URL',
  clientId: 'VERIFY_CLIENT_ID',
  clientSecret: 'VERIFY_CLIENT_SECRET',
  returnUrl: 'VERIFY_RETURN_URL',
} as const;

/** What verifyOptionsFromEnv returns: the options that connect the kit to the service. */
export interface VerifyEnvOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  returnUrl: string;
}

/**
 * `{ baseUrl, clientId, clientSecret, returnUrl }` from VERIFY_BASE_URL, VERIFY_CLIENT_ID,
 * VERIFY_CLIENT_SECRET and VERIFY_RETURN_URL (`env` defaults to `process.env`). Throws one
 * KitError `invalid_options` naming every variable that is missing or empty. The values are
 * checked as options by `createVerificationKit`.
 */
export function verifyOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): VerifyEnvOptions {
  const problems = new OptionProblems('verifyOptionsFromEnv');
  const read = (option: keyof typeof VERIFY_ENV): string => {
    const name = VERIFY_ENV[option];
    const value = env[name]?.trim() ?? '';
    if (value === '') problems.add(`${name} is not set: it gives \`${option}\` (e.g. ${example(option)}).`);
    return value;
  };
  const options = {
    baseUrl: read('baseUrl'),
    clientId: read('clientId'),
    clientSecret: read('clientSecret'),
    returnUrl: read('returnUrl'),
  };
  problems.throwIfAny();
  return options;
}

function example(option: keyof typeof VERIFY_ENV): string {
  switch (option) {
    case 'baseUrl':
      return 'https://verify.example.com';
    case 'clientId':
      return 'the client id the service registered for your app';
    case 'clientSecret':
      return "your client's secret, from your secret store";
    case 'returnUrl':
      return 'https://shop.example/verify/return, exactly as registered';
  }
}
