import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('../fixtures/number-start-retention.ts', import.meta.url));

describe('a stored number judged by the real number it starts with', () => {
  it('is not kept in the process once read: no cache holds users’ whole numbers', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', FIXTURE], { timeout: 30_000 });
    const seen = JSON.parse(stdout) as { startType: string; block: string; whileHeld: boolean; afterwards: boolean };
    // It was judged as the premium-rate number it starts with, and the search finds a number held.
    expect(seen.startType).toBe('PREMIUM_RATE');
    expect(seen.whileHeld).toBe(true);
    expect(seen.afterwards).toBe(false);
  }, 40_000);
});
