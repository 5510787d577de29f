/**
 * Who signs in during tests. The test app (test/support/app.ts) signs a user in by name and
 * resolves the name to a userRef and a phone; the demo has its own seeded users, signed in by id.
 */
import { createHash } from 'node:crypto';

export interface AppUser {
  userRef: string;
  destination: string;
}

/**
 * The kit test app's users, with fixed phone numbers that suites assert on. A test may change a
 * destination (a user's number changed) and must restore it.
 */
export const USERS: Record<string, AppUser> = {
  alice: { userRef: 'user-alice', destination: '+15550001111' },
  bob: { userRef: 'user-bob', destination: '+15550002222' },
};

/** Any name as a user: a stable userRef, and a phone derived from the name (many distinct users in load and limit tests). */
export function userNamed(name: string): AppUser {
  const digits = BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 12)}`) % 10_000_000n;
  return { userRef: `user-${name}`, destination: `+1555${digits.toString().padStart(7, '0')}` };
}

/** The demo's seeded users (demo-app), as its sign-in page and its database know them. */
export const DEMO_USERS = {
  alice: { id: 'usr_alice', name: 'Alice Moreau', phone: '+15550100001' },
  bob: { id: 'usr_bob', name: 'Bob Okafor', phone: '+15550100002' },
  chen: { id: 'usr_chen', name: 'Chen Wei', phone: '+15550100003' },
} as const;
export type DemoUserKey = keyof typeof DEMO_USERS;
