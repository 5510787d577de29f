/**
 * The userRef the service is sent for an attempt. The hosted page keeps passkeys per userRef, and a
 * passkey answers instead of the texted code: a userRef that names only the user lets a passkey
 * enrolled while one number was confirmed "verify" any other. An action that proves the
 * destination therefore sends a userRef bound to the user AND the number (stable for that pair, as
 * passkey enrolment needs), a keyed HMAC, so the ref reveals neither to anyone without the key.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import { normaliseDestination } from '../numbers/number-spelling.ts';
import type { ActionDefinition } from '../types.ts';

/** Marks the ref's derivation: a later one gets another prefix, and its refs never collide with these. */
const DESTINATION_REF_PREFIX = 'vkd1_';

/** The HMAC key of destination-bound refs, derived from another server-side secret (one-way). */
export function deriveServiceRefKey(serverSecret: string): Uint8Array {
  return new Uint8Array(
    hkdfSync('sha256', serverSecret, '', 'hosted-sms-verify-kit service userRef: user and destination', 32),
  );
}

/** The destination-bound ref of a user and a number: one per pair, whatever the number's spelling. */
export function destinationBoundRef(key: Uint8Array, user: { userRef: string; destination: string }): string {
  // JSON of the pair: unambiguous whatever characters the userRef holds.
  const pair = JSON.stringify([user.userRef, normaliseDestination(user.destination)]);
  return `${DESTINATION_REF_PREFIX}${createHmac('sha256', key).update(pair).digest('base64url')}`;
}

/**
 * The userRef to send for this action, and what to store beside the attempt for the echo check:
 * null when it is the user's own userRef (`proves: 'user'`, the default).
 */
export function serviceUserRefFor(
  key: Uint8Array,
  action: Pick<ActionDefinition, 'proves'>,
  user: { userRef: string; destination: string },
): string | null {
  return action.proves === 'destination' ? destinationBoundRef(key, user) : null;
}
