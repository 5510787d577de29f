/**
 * One log line per completion (a landing, a mobile completion, or an attempt the sweep settled):
 * a first fulfilment and a replay read differently, so the logs show whether an action ran twice.
 * Identifiers only: never the state, the params or the destination.
 */
import type { KitLogger } from '../logger.ts';
import type { Completion } from './fulfil.ts';

/** Where a completion was made: the web landing, the mobile completion or the sweep. */
export type CompletionRoute = 'landing' | 'mobile-complete' | 'sweep';

/** How a fulfilled completion came about: this call ran the action, or it found it done. */
export type Fulfilment = 'first' | 'replay';

function describe(completion: Completion): { fields: Record<string, unknown>; msg: string } {
  switch (completion.kind) {
    case 'fulfilled':
      return completion.firstTime
        ? { fields: { fulfilment: 'first' }, msg: 'verification fulfilled: first fulfilment, the action ran' }
        : {
            fields: { fulfilment: 'replay' },
            msg: 'verification already fulfilled: replay (a reload or a second caller), the action did not run again',
          };
    case 'failed':
      return { fields: { reason: completion.reason }, msg: 'verification failed: nothing was fulfilled' };
    case 'pending':
      return { fields: {}, msg: 'verification still pending: the page keeps checking, then the sweep finishes it' };
    case 'expired':
      return { fields: {}, msg: 'verification expired: nothing was fulfilled' };
    case 'superseded':
      return {
        fields: { supersededBy: completion.attempt.supersededBy },
        msg: 'verification superseded: a newer one of the same user and action was applied',
      };
  }
}

/** Logs one completion at info level. */
export function logCompletion(logger: KitLogger | undefined, route: CompletionRoute, completion: Completion): void {
  if (logger === undefined) return;
  const { fields, msg } = describe(completion);
  const { sessionId, action } = completion.attempt;
  logger.info({ route, sessionId, action, outcome: completion.kind, ...fields }, msg);
}
