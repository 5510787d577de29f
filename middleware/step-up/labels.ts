/** A scope's label in a page's language: its own text for that language, else English, else none. */
import type { ScopeDefinition } from '../types.ts';

/** The label's text for a tag, read as tags are compared (case-insensitively: `pt-BR` is `pt-br`). */
function textFor(label: Readonly<Record<string, string>>, tag: string): string | undefined {
  const key = Object.keys(label).find((written) => written.toLowerCase() === tag);
  return key === undefined ? undefined : label[key];
}

export function labelFor(scope: ScopeDefinition, lang: string): string | undefined {
  const { label } = scope;
  if (label === undefined || typeof label === 'string') return label;
  const tag = lang.toLowerCase();
  return textFor(label, tag) ?? textFor(label, tag.split('-')[0] ?? '') ?? textFor(label, 'en');
}
