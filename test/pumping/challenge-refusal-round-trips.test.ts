/**
 * A refusal after the app's challenge takes as many pumping-store calls whichever rule refused it and
 * whatever the challenge answered: a start refused by the counts whose challenge passed, then refused
 * by its second check (its key held meanwhile by the attacker's own concurrent starts), took three
 * (reserveSend, reserveSend, recordDecision) where a block with the challenge passed or a hold with
 * it failed took two: its timing told the attacker it was refused by the counts after a passed
 * challenge, not by a block or a hold. Every start offered the challenge is now checked again.
 */
import type { Request } from 'express';
import { afterAll, expect, it } from 'vitest';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { testGuard } from '../support/pumping-guard.ts';

const NOW = (Math.floor(Date.now() / 3_600_000) + 5) * 3_600_000 + 10 * 60_000;

const store = createSqliteStore({ database: ':memory:' });
afterAll(() => store.close());

/** Pumping store calls per userRef (the calls a start's answer waits on). */
const calls = new Map<string, string[]>();
const userOf = (args: unknown[]): string | undefined => {
  const [first] = args as [{ userRef?: string; keys?: { dimension: string; key: string }[] } | undefined];
  return first?.userRef ?? first?.keys?.find((k) => k.dimension === 'user')?.key;
};
const counting = new Proxy(store.pumping!, {
  get(target, key) {
    const value: unknown = Reflect.get(target, key, target);
    if (typeof value !== 'function') return value;
    return (...args: unknown[]) => {
      const user = userOf(args);
      if (user !== undefined) calls.set(user, [...(calls.get(user) ?? []), String(key)]);
      return (value as (...a: unknown[]) => unknown).apply(target, args);
    };
  },
}) as PumpingStore;

/** Challenges held open until the test says how they end, per user. */
interface Gate {
  wait: Promise<boolean>;
  open: (passed: boolean) => void;
  /** Resolves once the challenge is asked (the start's first check is done). */
  asked: Promise<void>;
  ask: () => void;
}
const gates = new Map<string, Gate>();
function gate(user: string): Gate {
  let open!: (passed: boolean) => void;
  let ask!: () => void;
  const wait = new Promise<boolean>((resolve) => (open = resolve));
  const asked = new Promise<void>((resolve) => (ask = resolve));
  const made = { wait, open, asked, ask };
  gates.set(user, made);
  return made;
}

const guard = testGuard(
  counting,
  {
    mode: 'refuse',
    thresholds: {
      // Only the country's rules: one unverified text trips its hourly rule; three presses hold it.
      country: { dailyFloor: 1, hourlyFloor: 1 },
      block: { dailyFloor: 100_000, hourlyFloor: 100_000 },
      address: { dailyFloor: 100_000, hourlyFloor: 100_000 },
      addressCountries: 100,
    },
    challenge: {
      verify: (req) => {
        const user = (req.body as { user: string }).user;
        const found = gates.get(user);
        found?.ask();
        return found?.wait ?? false;
      },
    },
  },
  NOW,
);

const reqOf = (user: string) => ({ ip: '192.0.2.10', socket: {}, body: { user } }) as unknown as Request;
const start = (user: string, destination: string) =>
  guard(reqOf(user), { userRef: user, destination }).then(
    () => 'sent',
    (error: { code?: string }) => error.code ?? 'error',
  );

it('a passed challenge refused at its second check takes as many store calls as any other refusal', async () => {
  await store.pumping!.setRule({ dimension: 'country', key: 'GH', rule: 'block', until: NOW + 3_600_000, setAt: NOW });
  // One Nigerian text never verified: the country's hourly rule trips for the next.
  expect(await start('setup', '+2348031000001')).toBe('sent');
  // Two refusals (challenge failed) press on the country: one short of its hold (3 x 1).
  expect(await start('press-1', '+2348032000001')).toBe('rate_limited');
  expect(await start('press-2', '+2348033000001')).toBe('rate_limited');

  // The attacker's start A: refused by the counts, offered the challenge, which it will pass.
  const a = gate('attacker-a');
  const answerA = start('attacker-a', '+2348034000001');
  await a.asked;
  // Meanwhile its start B, on the now held country, is refused (its challenge failed).
  expect(await start('attacker-b', '+2348035000001')).toBe('rate_limited');
  a.open(true);
  expect(await answerA).toBe('rate_limited');

  // Another of the attacker's starts, to a blocked country, its challenge passed.
  gate('attacker-c').open(true);
  expect(await start('attacker-c', '+233201234567')).toBe('rate_limited');

  const shown = {
    passedThenHeld: calls.get('attacker-a'),
    heldChallengeFailed: calls.get('attacker-b'),
    blockedChallengePassed: calls.get('attacker-c'),
  };
  expect(shown.passedThenHeld?.length, JSON.stringify(shown)).toBe(shown.blockedChallengePassed?.length);
  expect(shown.passedThenHeld?.length, JSON.stringify(shown)).toBe(shown.heldChallengeFailed?.length);
});
