/**
 * The pending page's own checks (pages.ts pendingScript), run on a clock of the test's own: the
 * first after `refreshSeconds`, each later wait half as long again up to ten times the first, none
 * after the window, each marked as a background check (which reads the status once).
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { englishMessages } from '../../middleware/pages/messages.ts';
import { pendingScript } from '../../middleware/pages/pages.ts';

interface Check {
  at: number;
  url: string;
  headers: Record<string, string>;
}

/** Runs the page's script until no timer is left; the service says pending until `verifiedAt`. */
async function checksOf(refreshSeconds: number, refreshForSeconds: number, verifiedAt = Infinity) {
  const script = String(
    pendingScript({ refreshSeconds, refreshForSeconds, checkAgainUrl: '/verify/return?x=1' }, 'n', englishMessages),
  );
  const code = script.slice(script.indexOf('>') + 1, script.lastIndexOf('</script>'));
  let clock = 0;
  const timers: { at: number; run: () => void }[] = [];
  const checks: Check[] = [];
  const opened: string[] = [];
  const status = { textContent: '' };
  runInNewContext(code, {
    Date: { now: () => clock },
    Math,
    setTimeout: (run: () => void, ms: number) => timers.push({ at: clock + ms, run }),
    fetch: (url: string, init: { headers: Record<string, string> }) => {
      checks.push({ at: clock, url, headers: init.headers });
      const pending = clock < verifiedAt;
      return Promise.resolve({
        type: pending ? 'basic' : 'opaqueredirect',
        ok: pending,
        headers: { get: (name: string) => (pending && name === 'X-Verify-Kit-Outcome' ? 'pending' : null) },
      });
    },
    document: { getElementById: () => status },
    window: { location: { replace: (url: string) => opened.push(url) } },
  });
  for (let timer = timers.shift(); timer !== undefined; timer = timers.shift()) {
    clock = timer.at;
    timer.run();
    // Let the fetch's promise chain schedule the next timer.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
  return { checks, opened, status: status.textContent, endedAt: clock };
}

describe('the pending page checks', () => {
  it('first after refreshSeconds, then each wait half as long again, up to ten times the first', async () => {
    const { checks, status } = await checksOf(3, 300);
    const waits = checks.map((c, i) => c.at - (i === 0 ? 0 : checks[i - 1]!.at));
    expect(waits).toEqual([3000, 4500, 6750, 10125, 15188, 22782, 30000, 30000, 30000, 30000, 30000, 30000, 30000]);
    // Five minutes on the page: 13 checks, each one status read.
    expect(checks.at(-1)!.at).toBeLessThan(300_000);
    expect(status).toBe(englishMessages.pending.stopped);
  });

  it('marks every check as the page’s own, and requests only the page’s landing URL', async () => {
    const { checks } = await checksOf(1, 60);
    expect(checks.length).toBeGreaterThan(3);
    for (const check of checks) {
      expect(check.url).toBe('/verify/return?x=1');
      expect(check.headers).toEqual({ 'X-Verify-Kit-Check': 'background' });
    }
  });

  it('opens the landing at the first check after the outcome, then checks no more', async () => {
    const { checks, opened, status } = await checksOf(3, 300, 20_000);
    expect(checks.map((c) => c.at)).toEqual([3000, 7500, 14250, 24375]);
    expect(opened).toEqual(['/verify/return?x=1']);
    expect(status).toBe(englishMessages.pending.resultReady);
  });
});
