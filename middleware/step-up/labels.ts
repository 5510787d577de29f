/** A scope's label in a page's language: its own text for that language, else English, else none. */
import type { ScopeDefinition } from '../types.ts';

export function labelFor(scope: ScopeDefinition, lang: string): string | undefined {
  const { label } = scope;
  if (label === undefined || typeof label === 'string') return label;
  const tag = lang.toLowerCase();
  return label[tag] ?? label[tag.split('-')[0] ?? ''] ?? label.en;
}
