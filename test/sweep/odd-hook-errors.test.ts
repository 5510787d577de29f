/**
 * What an integrator's onOutcome rejects with is its own: a value that cannot even be turned into
 * text (an object without a prototype) never fails the sweep run, and an error quoting the client's
 * Basic header is logged without the secret. The same holds for a ready client's status read that
 * rejects with a value `instanceof` throws on (a revoked Proxy, as a membrane may hand back).
 */
import { describe, expect, it } from 'vitest';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { CLIENT_ID, CLIENT_SECRET, useSweepBench, type Bench } from '../support/sweep-bench.ts';
import { createTestClock } from '../support/clock.ts';

const { emu, openBench } = useSweepBench();
let b: Bench | undefined;

/** A logger keeping each call as a JSON line. */
function recordingLogger() {
  const lines: string[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg?: string) =>
    lines.push(JSON.stringify({ level, ...obj, msg }));
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('an onOutcome that rejects with', () => {
  it('an object without a prototype: the run ends normally, the event is delivered again later', async () => {
    const clock = createTestClock();
    b = await openBench(clock.now);
    const [attempt] = await b.createAttempts(1);
    await emu.control.completeSession(attempt!.sessionId, 'verified');
    let calls = 0;
    const onOutcome = () => (++calls === 1 ? Promise.reject(Object.create(null)) : Promise.resolve());
    const { lines, logger } = recordingLogger();
    const report = await runSweep({ ...b.deps, onOutcome, logger }, { timeBudgetMs: 2000 });
    expect(report).toMatchObject({ fulfilled: 1, outcomesDelivered: 0, outcomeDeliveryErrors: 1 });
    expect(lines.some((line) => line.includes('onOutcome failed'))).toBe(true);
    const later = await clock.shifted(60_000, () =>
      runSweep({ ...b!.deps, onOutcome, logger }, { timeBudgetMs: 2000 }),
    );
    expect(later.outcomesDelivered).toBe(1);
  });

  it("an error quoting the client's Basic header: logged without the secret", async () => {
    b = await openBench();
    const [attempt] = await b.createAttempts(1);
    await emu.control.completeSession(attempt!.sessionId, 'verified');
    const basic = Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64');
    const onOutcome = () =>
      Promise.reject(new Error(`webhook refused Authorization: Basic ${basic} (${CLIENT_SECRET})`));
    const { lines, logger } = recordingLogger();
    const report = await runSweep({ ...b.deps, onOutcome, logger }, { timeBudgetMs: 2000 });
    expect(report.outcomeDeliveryErrors).toBe(1);
    const failed = lines.filter((line) => line.includes('webhook refused'));
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed) {
      expect(line).not.toContain(CLIENT_SECRET);
      expect(line).not.toContain(basic.slice(8, -4));
    }
  });
});

describe("a ready client's status read that rejects with a revoked Proxy", () => {
  it('the run ends normally and counts the error; the attempt is read again later, not claimed first for ever', async () => {
    const clock = createTestClock();
    b = await openBench(clock.now);
    const [attempt] = await b.createAttempts(1);
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const client = { ...b.deps.client, getSession: () => Promise.reject(proxy as Error) };
    const report = await clock.shifted(4 * 60_000, () => runSweep({ ...b!.deps, client }, { timeBudgetMs: 2000 }));
    expect(report).toMatchObject({ claimed: 1, reads: 1, errors: 1 });
    const stored = await b.deps.store.findAttemptBySessionId(attempt!.sessionId);
    expect(stored).toMatchObject({ outcome: 'pending' });
    expect(stored!.nextCheckAt).toBeGreaterThan(clock.now() + 4 * 60_000);
  });
});
