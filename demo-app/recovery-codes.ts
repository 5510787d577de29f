/**
 * The demo's recovery codes: derived from the server secret and how many times the user replaced
 * them, so a replacement makes every earlier set stop being the user's.
 */
import { createHmac } from 'node:crypto';
import type { DemoReads } from './data.ts';
import { NEW_RECOVERY_CODES } from './domain.ts';

const CODES = 8;

function codesOf(secret: string, userId: string, generation: number): string[] {
  const digest = createHmac('sha256', secret).update(`recovery codes\0${userId}\0${generation}`).digest('hex');
  return Array.from({ length: CODES }, (_, i) => digest.slice(i * 8, i * 8 + 8).replace(/(.{4})/, '$1-'));
}

/**
 * How many times the user replaced their codes: counted over all their activity, since a count
 * over the newest page of it drops as other entries push the replacements out, and the replaced
 * codes would be the user's again.
 */
export async function replacementsOf(queries: DemoReads, userId: string): Promise<number> {
  return queries.activityCount(userId, NEW_RECOVERY_CODES);
}

/** The user's recovery codes as they are now. */
export async function currentRecoveryCodes(queries: DemoReads, secret: string, userId: string): Promise<string[]> {
  return codesOf(secret, userId, await replacementsOf(queries, userId));
}
