/**
 * The demo's second language is complete: its French kit messages give every text the kit's
 * English has (nothing falls back to English), and its own French texts have every key of the
 * English ones.
 */
import { describe, expect, it } from 'vitest';
import { DEMO_TEXTS, demoKitMessages } from '../../demo-app/i18n.ts';
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
