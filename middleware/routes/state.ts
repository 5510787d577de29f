/**
 * The attempt's `state`: made here for every attempt (a fresh one each time, from node:crypto)
 * and recognised here when it comes back. It is an identifier, never evidence. The pages' CSP
 * nonces come from the same random source.
 */
import { randomFillSync } from 'node:crypto';

/** The kit's states: 32 random bytes, base64url without padding. */
export const STATE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Random bytes from node:crypto, drawn from a block filled 4 KiB at a time (as node:crypto's own
 * randomUUID does): each byte is handed out once, and one fill costs about what a single
 * randomBytes call costs, so a state or a nonce pays for a slice of a fill instead of a call.
 */
const BLOCK_BYTES = 4096;
const block = Buffer.alloc(BLOCK_BYTES);
let used = BLOCK_BYTES;

/** `bytes` fresh random bytes (at most 4096), encoded at once so no caller keeps a view of the block. */
export function randomText(bytes: number, encoding: 'base64' | 'base64url' | 'hex'): string {
  if (used + bytes > BLOCK_BYTES) {
    randomFillSync(block);
    used = 0;
  }
  const text = block.toString(encoding, used, used + bytes);
  used += bytes;
  return text;
}

/** 32 bytes from node:crypto, base64url: 43 characters, 256 bits. */
export function newState(): string {
  return randomText(32, 'base64url');
}

/** A page's CSP nonce: 16 bytes, base64, fresh for every response. */
export function newNonce(): string {
  return randomText(16, 'base64');
}

/** True for a string shaped like a state this kit makes. */
export function isStateShaped(value: unknown): value is string {
  return typeof value === 'string' && STATE_PATTERN.test(value);
}
