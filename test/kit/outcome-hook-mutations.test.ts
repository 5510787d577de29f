/**
 * The event handed to onOutcome is the integrator's to keep: a hook that changes it (a queue
 * client that rewrites or deletes fields it sends) must not change which stored event the kit
 * marks delivered or schedules again. The store is a recording stand-in: what is tested is the
 * event id the delivery passes to it.
 */
import { describe, expect, it } from 'vitest';
import { deliverOutcomeEvents, type OutcomeDeliveryDeps } from '../../middleware/fulfil/outcomes.ts';
import type { StoredOutcomeEvent } from '../../middleware/store/types.ts';
import type { OutcomeEvent } from '../../middleware/types.ts';

function storedEvent(eventId: string): StoredOutcomeEvent {
  return {
    eventId,
    outcome: 'fulfilled',
    source: 'landing',
    occurredAt: 1000,
    deliveries: 1,
    attempt: { sessionId: `sess-${eventId}`, userRef: 'u', action: 'a', params: {}, destination: null } as never,
  };
}

function recordingDeps(hook: (event: OutcomeEvent) => Promise<void>) {
  const calls: string[] = [];
  const deps: OutcomeDeliveryDeps = {
    onOutcome: hook,
    now: () => 5000,
    logger: undefined,
    hookTimeouts: undefined,
    store: {
      claimOutcomeEvents: async () => [storedEvent('evt-1')],
      markOutcomeEventDelivered: async (eventId) => void calls.push(`delivered ${eventId}`),
      retryOutcomeEvent: async (eventId) => void calls.push(`retry ${eventId}`),
    },
  };
  return { deps, calls };
}

const options = { owner: 'o', leaseMs: 60_000, limit: 10, eventIds: ['evt-1'] };

describe('an onOutcome hook that changes the event it was given', () => {
  it('acknowledged: the stored event is marked delivered, not the id the hook wrote', async () => {
    const { deps, calls } = recordingDeps(async (event) => {
      (event as { eventId: string }).eventId = 'evt-2';
    });
    expect(await deliverOutcomeEvents(deps, options)).toEqual({ delivered: 1, failed: 0 });
    expect(calls).toEqual(['delivered evt-1']);
  });

  it('failed: the stored event is scheduled again, not the id the hook wrote', async () => {
    const { deps, calls } = recordingDeps(async (event) => {
      delete (event as { eventId?: string }).eventId;
      throw new Error('queue down');
    });
    expect(await deliverOutcomeEvents(deps, options)).toEqual({ delivered: 0, failed: 1 });
    expect(calls).toEqual(['retry evt-1']);
  });
});
