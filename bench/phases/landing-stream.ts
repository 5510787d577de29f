/**
 * The rate-limited phase's landings: an open-loop stream of landings, each on its own verified
 * attempt, and what they answered and how fast.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SeedAttempt } from '../common.ts';
import type { LandingTime } from '../children/app/landing-spans.ts';
import { loadPool, percentile, sortedCopy } from '../load.ts';
import { round2 } from '../measure.ts';
import { landingPath, type Side } from './sides.ts';

/** A steady stream of landings: what they answered and how fast. */
export interface LandingStream {
  landings: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
}

/**
 * A stream's figures and its latencies (for pooling streams); the landings' time by part (the kit's
 * spans in the app) and how long the stream ran.
 */
export type Streamed = { stream: LandingStream; latencies: number[]; times: LandingTime[]; windowMs: number };

/**
 * Open loop: a landing every 1/rate s, each on its own attempt, whatever the previous ones are
 * doing (a user does not wait for another), until `until` resolves or the attempts run out.
 */
export async function landingStream(
  side: Side,
  cookie: string,
  attempts: SeedAttempt[],
  perSecond: number,
  until: Promise<unknown>,
): Promise<Streamed> {
  const pool = loadPool(side.origin, 64);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const inFlight = new Set<Promise<void>>();
  let done = false;
  void until.finally(() => (done = true));
  const began = performance.now();
  for (let i = 0; !done && attempts.length > 0; i++) {
    const wait = began + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await Promise.race([sleep(wait), until]);
    if (done) break;
    const attempt = attempts.shift()!;
    const t0 = performance.now();
    const one = pool
      .request({ method: 'GET', path: landingPath(attempt), headers: { cookie } })
      .then(async (r) => {
        await r.body.dump({ limit: Number.MAX_SAFE_INTEGER });
        latencies.push(performance.now() - t0);
        statuses[r.statusCode] = (statuses[r.statusCode] ?? 0) + 1;
      })
      .catch(() => void (statuses['0'] = (statuses['0'] ?? 0) + 1))
      .finally(() => inFlight.delete(one));
    inFlight.add(one);
  }
  await Promise.all(inFlight);
  const windowMs = performance.now() - began;
  await pool.close();
  // Every landing of this stream has answered: the app's landings since the last stream are this one's.
  const times = await side.child.call<LandingTime[]>('landingTimes');
  return { stream: streamOf(latencies, statuses), latencies, times, windowMs };
}

function streamOf(latencies: number[], statuses: Record<string, number>): LandingStream {
  const sorted = sortedCopy(latencies);
  return {
    landings: latencies.length,
    statuses,
    p50: round2(percentile(sorted, 50)),
    p99: round2(percentile(sorted, 99)),
  };
}

/** Several windows' landings as one, their latencies kept (for pooling again). */
export function pooledStreams(streams: Streamed[]): Streamed {
  return {
    stream: pooled(streams),
    latencies: streams.flatMap((s) => s.latencies),
    times: streams.flatMap((s) => s.times),
    windowMs: streams.reduce((n, s) => n + s.windowMs, 0),
  };
}

/** Every round's landings as one stream. */
export function pooled(streams: Streamed[]): LandingStream {
  const statuses: Record<string, number> = {};
  for (const { stream } of streams)
    for (const [status, n] of Object.entries(stream.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  return streamOf(
    streams.flatMap((s) => s.latencies),
    statuses,
  );
}
