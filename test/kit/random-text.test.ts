/**
 * States and nonces come from a block of node:crypto random bytes: each value is fresh (no byte is
 * handed out twice, across many refills of the block) and has the shape the kit recognises.
 */
import { describe, expect, it } from 'vitest';
import { STATE_PATTERN, newNonce, newState, randomText } from '../../middleware/routes/state.ts';

describe('random states and nonces', () => {
  it('5000 states (about 40 refills of the block) are all different and state-shaped', () => {
    const states = Array.from({ length: 5000 }, () => newState());
    expect(new Set(states).size).toBe(states.length);
    expect(states.every((state) => STATE_PATTERN.test(state))).toBe(true);
  });

  it('nonces are 16 fresh bytes in base64, never repeated, also when sizes interleave at the block edge', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const nonce = newNonce();
      expect(Buffer.from(nonce, 'base64')).toHaveLength(16);
      seen.add(nonce);
      seen.add(randomText(7, 'hex'));
    }
    expect(seen.size).toBe(6000);
  });
});
