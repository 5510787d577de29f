/**
 * The hosted page's passkeys: the credential store (per client and userRef, so enrolment persists only
 * for a stable userRef) and the WebAuthn ceremonies, verified by @simplewebauthn/server.
 * Relying party: the hosted page's own host name (e.g. `verify.localhost`). IP addresses cannot be
 * an RP ID, so on an IP host passkeys are off and the page is SMS only.
 */
import { isIP } from 'node:net';
import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type WebAuthnCredential,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';

/** How long the browser shows its passkey prompt (the server accepts the answer for PASSKEY_CHALLENGE_TTL_MS). */
const CEREMONY_TIMEOUT_MS = 60_000;
const RP_NAME = 'Hosted verification (local emulator)';

export interface StoredPasskey {
  clientId: string;
  userRef: string;
  /** base64url credential id. */
  id: string;
  publicKey: Uint8Array;
  counter: number;
  transports?: WebAuthnCredential['transports'];
  /** Successful passkey verifications with this credential. */
  uses: number;
}

/** The relying party a hosted page speaks for: its origin and RP ID. */
export interface RelyingParty {
  origin: string;
  rpId: string;
}

/** The RP of a hosted page origin, or undefined when its host is an IP address (WebAuthn refuses those). */
export function relyingPartyOf(pageOrigin: string): RelyingParty | undefined {
  const { hostname } = new URL(pageOrigin);
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) === 0 ? { origin: pageOrigin, rpId: hostname } : undefined;
}

// JSON of the pair: unambiguous whatever characters the userRef holds.
const ownerKey = (clientId: string, userRef: string) => JSON.stringify([clientId, userRef]);

export class PasskeyStore {
  readonly #byOwner = new Map<string, StoredPasskey[]>();
  /** Random WebAuthn user handle per owner: never the userRef itself (the handle must not carry PII). */
  readonly #handles = new Map<string, Uint8Array>();

  list(clientId: string, userRef: string): readonly StoredPasskey[] {
    return this.#byOwner.get(ownerKey(clientId, userRef)) ?? [];
  }

  has(clientId: string, userRef: string): boolean {
    return this.list(clientId, userRef).length > 0;
  }

  userHandle(clientId: string, userRef: string): Uint8Array {
    const key = ownerKey(clientId, userRef);
    let handle = this.#handles.get(key);
    if (handle === undefined) {
      handle = new Uint8Array(randomBytes(32));
      this.#handles.set(key, handle);
    }
    return handle;
  }

  add(passkey: StoredPasskey): void {
    const key = ownerKey(passkey.clientId, passkey.userRef);
    const list = this.#byOwner.get(key) ?? [];
    if (!list.some((existing) => existing.id === passkey.id)) list.push(passkey);
    this.#byOwner.set(key, list);
  }

  all(): StoredPasskey[] {
    return [...this.#byOwner.values()].flat();
  }

  clear(): void {
    this.#byOwner.clear();
    this.#handles.clear();
  }
}

export function enrolmentOptions(
  rp: RelyingParty,
  store: PasskeyStore,
  owner: { clientId: string; userRef: string; displayName: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.rpId,
    userName: owner.displayName,
    userDisplayName: owner.displayName,
    userID: store.userHandle(owner.clientId, owner.userRef) as Uint8Array<ArrayBuffer>,
    attestationType: 'none',
    // A device that already holds one of this user's passkeys is told so instead of making a second.
    excludeCredentials: store.list(owner.clientId, owner.userRef).map(({ id, transports }) => ({ id, transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    timeout: CEREMONY_TIMEOUT_MS,
  });
}

export function verificationOptions(
  rp: RelyingParty,
  passkeys: readonly StoredPasskey[],
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    // Only this userRef's credentials: a passkey of another userRef is never offered (nor accepted).
    allowCredentials: passkeys.map(({ id, transports }) => ({ id, transports })),
    userVerification: 'preferred',
    timeout: CEREMONY_TIMEOUT_MS,
  });
}

/** The credential a page posted (JSON in a form field), or undefined when it is not even shaped like one. */
export function parseCredential(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const { id, response } = parsed as Record<string, unknown>;
    const shaped = typeof id === 'string' && typeof response === 'object' && response !== null;
    return shaped ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Verifies a `navigator.credentials.create` answer; the new passkey, or undefined when it does not verify. */
export async function verifyEnrolment(
  rp: RelyingParty,
  credential: Record<string, unknown>,
  expectedChallenge: string,
  owner: { clientId: string; userRef: string },
): Promise<StoredPasskey | undefined> {
  try {
    const result = await verifyRegistrationResponse({
      response: credential as unknown as RegistrationResponseJSON,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      // User presence proves possession of the device, which is what an SMS code proves; UV is a bonus.
      requireUserVerification: false,
    });
    if (!result.verified) return undefined;
    const { id, publicKey, counter, transports } = result.registrationInfo.credential;
    return { ...owner, id, publicKey, counter, transports, uses: 0 };
  } catch {
    return undefined; // malformed or forged: the library explains why, the page only says it failed
  }
}

/** Verifies a `navigator.credentials.get` answer: true when one of the owner's passkeys signed the challenge. */
export async function verifyAssertion(
  rp: RelyingParty,
  credential: Record<string, unknown>,
  expectedChallenge: string,
  passkeys: readonly StoredPasskey[],
): Promise<boolean> {
  const passkey = passkeys.find((candidate) => candidate.id === credential.id);
  if (passkey === undefined) return false;
  try {
    const result = await verifyAuthenticationResponse({
      response: credential as unknown as AuthenticationResponseJSON,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpId,
      credential: {
        id: passkey.id,
        publicKey: passkey.publicKey as Uint8Array<ArrayBuffer>,
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: false,
    });
    if (!result.verified) return false;
    passkey.counter = result.authenticationInfo.newCounter;
    passkey.uses += 1;
    return true;
  } catch {
    return false;
  }
}
