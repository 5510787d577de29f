/**
 * A software passkey authenticator for HTTP-level tests (browser tests use Chromium's virtual
 * one): an ES256 key, `none` attestation, WebAuthn JSON answers for a page's options. It signs
 * whatever challenge and origin it is given, so tests can also forge what a real browser would not.
 * Its few CBOR values are encoded here, so the `testing` entry loads no WebAuthn library.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_ATTESTED_DATA = 0x40;

type CborValue = number | string | Uint8Array | Map<number | string, CborValue>;

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const head = Buffer.alloc(5);
  head[0] = (major << 5) | 26;
  head.writeUInt32BE(length, 1);
  return head;
}

/** CBOR (RFC 8949) for the integers, strings, byte strings and maps a WebAuthn answer holds. */
function cbor(value: CborValue): Buffer {
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([cborHead(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value]);
  return Buffer.concat([cborHead(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

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
    const coseKey = new Map<number, CborValue>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      this.#authDataHead(rpId, FLAG_USER_PRESENT | FLAG_USER_VERIFIED | FLAG_ATTESTED_DATA),
      Buffer.alloc(16), // AAGUID
      idLength,
      this.credentialId,
      cbor(coseKey),
    ]);
    const attestationObject = cbor(
      new Map<string, CborValue>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
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
