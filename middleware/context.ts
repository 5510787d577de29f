/**
 * The one context of a kit, built once by the factory: the resolved options plus what the factory
 * builds from them (the client, the start limits, the service userRef key). The request paths and
 * the sweep read it.
 */
import type { Request } from 'express';
import type { HookTimeouts } from './deadline.ts';
import type { ResolvedKitOptions } from './options/options.ts';
import type { StartLimits } from './limits/start-limits.ts';
import type { Attempt } from './store/types.ts';
import type { VerifyClient } from './types.ts';

export interface KitContext<Tx = unknown> extends Omit<
  ResolvedKitOptions<Tx>,
  'client' | 'limits' | 'dangerouslyDisableStartLimits'
> {
  client: VerifyClient;
  /** undefined only with `dangerouslyDisableStartLimits: true`. */
  startLimits: StartLimits | undefined;
  /** The prefix length an IPv6 client is counted by, in the start budgets and the SMS pumping rules alike. */
  ipv6Subnet: number;
  /** The HMAC key of the destination-bound userRef sent for actions that prove the destination. */
  serviceRefKey: Uint8Array;
  /**
   * What the landing does, before its redirect, for a fulfilled attempt of the signed-in user:
   * a step-up scope's grant, when it lands in the browser session that asked for it.
   */
  onOwnLanding: (req: Request, attempt: Attempt) => Promise<void>;
}

/**
 * The part of the context the one fulfil path and the sweep read: the landing, the mobile
 * completion and the sweep all pass the kit's context (a test may pass just these fields).
 * Without `platform` the sweep claims the attempts of every platform; without `clientId` it reads
 * every attempt, whichever client started it; without `hookTimeouts` the callbacks get the default
 * deadlines.
 */
export type FulfilContext<Tx = unknown> = Pick<KitContext<Tx>, 'store' | 'actions' | 'now'> &
  Partial<Pick<KitContext<Tx>, 'platform' | 'clientId' | 'logger' | 'onOutcome'>> & {
    /** Deadlines of the callbacks (any left out get the default). */
    hookTimeouts?: Partial<HookTimeouts>;
    /** With `mode: 'off'` no verified text is counted for the SMS pumping rules (left out: counted). */
    pumping?: Pick<KitContext<Tx>['pumping'], 'mode'>;
    client: Pick<VerifyClient, 'getSession'>;
  };
