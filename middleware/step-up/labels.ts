/** A scope's label in a page's language: its own text for that language, else English, else none. */
import { guardSync } from '../deadline.ts';
import { describeError, thrownByIntegratorCode, type KitLogger } from '../logger.ts';
import type { ScopeDefinition } from '../types.ts';

/** The label's text for a tag, read as tags are compared (case-insensitively: `pt-BR` is `pt-br`). */
function textFor(label: Readonly<Record<string, string>>, tag: string): string | undefined {
  const key = Object.keys(label).find((written) => written.toLowerCase() === tag);
  const text = key === undefined ? undefined : label[key];
  return typeof text === 'string' ? text : undefined;
}

function readLabel(scope: ScopeDefinition, lang: string): string | undefined {
  const { label } = scope;
  if (label === undefined || typeof label === 'string') return label;
  const tag = lang.toLowerCase();
  return textFor(label, tag) ?? textFor(label, tag.split('-')[0] ?? '') ?? textFor(label, 'en');
}

/**
 * The label is the integrator's, read on every page that names it: a lazy translation's getter
 * that throws is logged, and the page names no action rather than failing (as a message does).
 */
export function labelFor(scope: ScopeDefinition, lang: string, logger: KitLogger): string | undefined {
  return guardSync(
    () => readLabel(scope, lang),
    (error) =>
      logger.error(
        { scope: scope.name, err: describeError(thrownByIntegratorCode(error)) },
        `scopes: the label of ${scope.name} could not be read; the page names no action`,
      ),
  );
}
