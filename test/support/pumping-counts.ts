/** What a test app's store has counted for the SMS pumping rules, read as the start's check reads it. */
import type { TestApp } from './app.ts';

const HOUR_MS = 3_600_000;

/** A country's counts (sent, verified, refused...) in the current hour of the app's clock. */
export async function countryCountsNow(app: TestApp, country: string) {
  const now = app.clock.now();
  const reading = await app.store.pumping!.readPumping({
    keys: [{ dimension: 'country', key: country }],
    address: '127.0.0.1',
    hour: Math.floor(now / HOUR_MS),
    now,
  });
  return reading.counts[0]!;
}
