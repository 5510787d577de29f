/**
 * The one context of a kit, built once by the factory: the resolved options plus what the factory
 * builds from them (the client and the start limits). The request paths and the sweep read it.
 */
import type { ResolvedKitOptions } from './options.ts';
import type { StartLimits } from './rate-limit.ts';
import type { VerifyClient } from './types.ts';

export interface KitContext<Tx = unknown> extends Omit<
  ResolvedKitOptions<Tx>,
  'client' | 'limits' | 'dangerouslyDisableStartLimits'
> {
  client: VerifyClient;
  /** undefined only with `dangerouslyDisableStartLimits: true`. */
  startLimits: StartLimits | undefined;
}
