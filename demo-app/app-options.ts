/** What createDemoApp takes: the configuration's part it uses, the service's address, and hooks for tests. */
import type { KitLogger, PumpingOptions, StartLimitsOptions } from 'hosted-sms-verify-kit';
import type { DemoConfig } from './config.ts';

export type DemoAppOptions = Pick<
  DemoConfig,
  'clientId' | 'clientSecret' | 'returnUrl' | 'databasePath' | 'sessionSecret' | 'trustProxy'
> & {
  /** PostgreSQL instead of the SQLite file (DATABASE_URL): for several instances of the demo. */
  databaseUrl?: string | undefined;
  /** The service (or emulator) base address. */
  verifyBaseUrl: string;
  logger?: KitLogger;
  now?: () => number;
  /** Budgets of the start limits (the kit's defaults when omitted), for stacks that start many attempts. */
  startLimits?: Pick<StartLimitsOptions, 'perUser' | 'perDestination' | 'perIp'>;
  /** The kit's SMS pumping rules (its default, 'record', when omitted); the operator page reads them. */
  pumping?: PumpingOptions;
  /** The demo users (ids) who may use the operator page; default: Alice (usr_alice) alone. */
  operators?: readonly string[] | undefined;
};
