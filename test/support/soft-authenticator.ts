/**
 * A software passkey authenticator for HTTP-level tests (the browser tests use Chromium's virtual
 * one): an ES256 key, `none` attestation, WebAuthn JSON answers for a page's options. It signs
 * whatever challenge and origin it is given, so tests can also forge what a real browser would not.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_ATTESTED_DATA = 0x40;

export interface CeremonyInput {
  /** base64url challenge from the page's options. */
  challenge: string;
  /** The page origin the browser would report, e.g. http://verify.localhost:4010. */
  origin: string;
  rpId: string;
}

export class SoftAuthenticator {
  readonly credentialId = randomBytes(32);
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  #signCount = 0;

  constructor() {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = pair.privateKey;
    this.#publicKey = pair.publicKey;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  /** A `navigator.credentials.create` answer, as the hosted page's script posts it. */
  register({ challenge, origin, rpId }: CeremonyInput): object {
    const jwk = this.#publicKey.export({ format: 'jwk' });
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      this.#authDataHead(rpId, FLAG_USER_PRESENT | FLAG_USER_VERIFIED | FLAG_ATTESTED_DATA),
      Buffer.alloc(16), // AAGUID
      idLength,
      this.credentialId,
      isoCBOR.encode(coseKey),
    ]);
    const attestation = new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]);
    const attestationObject = isoCBOR.encode(attestation as never);
    const clientDataJSON = JSON.stringify({ type: 'webauthn.create', challenge, origin, crossOrigin: false });
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(Buffer.from(clientDataJSON)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    };
  }

  /** A `navigator.credentials.get` answer. */
  assert({ challenge, origin, rpId }: CeremonyInput): object {
    const authData = this.#authDataHead(rpId, FLAG_USER_PRESENT | FLAG_USER_VERIFIED);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }));
    // ECDSA over authData || SHA-256(clientDataJSON); Node signs DER, which WebAuthn expects.
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.#privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
      },
    };
  }

  #authDataHead(rpId: string, flags: number): Buffer {
    this.#signCount += 1;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.#signCount);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count]);
  }
}
