/**
 * The demo's second language is complete: its French kit messages give every text the kit's
 * English has (nothing falls back to English), and its own French texts have every key of the
 * English ones. The Activity and Verifications pages name every action and step-up the demo runs
 * in the page's language, never by its identifier.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptSummary } from 'hosted-sms-verify-kit';
import { DEMO_ACTION_NAMES } from '../../demo-app/domain.ts';
import { DEMO_LOCALES, DEMO_TEXTS, demoKitMessages } from '../../demo-app/i18n.ts';
import { activityPage } from '../../demo-app/views/activity.ts';
import { verificationsPage } from '../../demo-app/views/verifications.ts';
import { englishMessages } from '../../middleware/index.ts';

/** Every key path of an object, one entry per leaf (functions are leaves). */
function keyPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [prefix];
  return Object.entries(value).flatMap(([key, inner]) => keyPaths(inner, prefix === '' ? key : `${prefix}.${key}`));
}

describe("the demo's French", () => {
  it('kit messages: every key of the English defaults, each a non-empty text or a function', () => {
    const french = demoKitMessages.fr as Record<string, unknown>;
    expect(keyPaths(french).sort()).toEqual(keyPaths(englishMessages).sort());
    for (const path of keyPaths(french)) {
      const leaf = path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], french);
      expect(typeof leaf === 'function' || (typeof leaf === 'string' && leaf.length > 0), path).toBe(true);
    }
    expect(demoKitMessages.fr.retryAfter?.(120)).toBe('Réessayez dans 2 minutes.');
  });

  it("the demo's own texts: the same keys in both languages", () => {
    expect(keyPaths(DEMO_TEXTS.fr).sort()).toEqual(keyPaths(DEMO_TEXTS.en).sort());
    expect(DEMO_TEXTS.fr.lang).toBe('fr');
  });
});

describe("the demo's Activity and Verifications pages", () => {
  it.each(DEMO_LOCALES)(
    'Activity and Verifications (%s) name each action and step-up by its label, never its identifier',
    (locale) => {
      const t = DEMO_TEXTS[locale];
      const viewer = { name: 'Alice', csrf: 'token', operator: false };
      const at = Date.UTC(2026, 0, 1);
      const activity = activityPage({
        t,
        viewer,
        entries: DEMO_ACTION_NAMES.map((action) => ({ sessionId: `s_${action}`, action, detail: 'Done', at })),
        emails: [],
      });
      const attempts = DEMO_ACTION_NAMES.map((action): AttemptSummary => ({
        sessionId: `s_${action}`,
        userRef: 'usr_alice',
        action,
        outcome: 'fulfilled',
        reason: null,
        supersededBy: null,
        source: 'landing',
        platform: 'web',
        clientId: 'demo-client',
        sensitivity: 'sensitive',
        createdAt: at,
        finishedAt: at,
        fulfilledAt: at,
        destination: '•• 01',
        redacted: false,
      }));
      const verifications = verificationsPage({ t, viewer, attempts, now: at });
      const labels = new Set<string>();
      for (const action of DEMO_ACTION_NAMES) {
        const row = new RegExp(`<tr data-session-id="s_${action}"[^>]*>([\\s\\S]*?)</tr>`);
        const cells = (page: string) =>
          [...(row.exec(page)?.[1] ?? '').matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]);
        const [inActivity] = cells(activity);
        const [inVerifications] = cells(verifications);
        expect(inActivity, action).toBe(inVerifications);
        expect(inActivity, action).not.toMatch(/^[a-z]+(_[a-z]+)+$/);
        labels.add(inActivity ?? '');
      }
      // One label per action: none stands in for another.
      expect(labels.size).toBe(DEMO_ACTION_NAMES.length);
    },
  );
});
