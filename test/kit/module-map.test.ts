/**
 * The kit's module boundaries that the architecture relies on: the package entry point only
 * re-exports, and the landing reaches the rest of the kit only through the return handling, the
 * pages and the user lookup (the fulfil path, the context and the store only as types); and each
 * store keeps its SQL text in one module (and its migrations in another).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const source = (name: string) => readFileSync(new URL(`../../middleware/${name}`, import.meta.url), 'utf8');

/** Statements without comments and blank lines, one per entry (multi-line statements joined). */
function statements(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return code
    .split(';')
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter((statement) => statement !== '');
}

describe('module map', () => {
  it('index.ts only re-exports: every statement is `export … from`', () => {
    const notReExports = statements(source('index.ts')).filter((s) => !/^export (type )?(\{[^}]*\}|\*) from '/.test(s));
    expect(notReExports).toEqual([]);
  });

  it('landing.ts imports values only from the return handling, the pages and the user lookup', () => {
    const valueImports = statements(source('landing.ts'))
      .filter((s) => s.startsWith('import ') && !s.startsWith('import type '))
      .map((s) => /from '([^']+)'$/.exec(s)?.[1]);
    expect(valueImports.sort()).toEqual(['./page-response.ts', './pages.ts', './returned.ts', './user.ts']);
  });

  it("names the kit's tables only in each store's SQL module and its migrations", () => {
    const modules = readdirSync(new URL('../../middleware/', import.meta.url), { recursive: true, encoding: 'utf8' });
    const naming = modules
      .filter((name) => name.endsWith('.ts'))
      .filter((name) => /verify_kit_(attempts|outcome_events|start_budgets)/.test(source(name)));
    expect(naming.sort()).toEqual([
      'store/postgres-schema.ts',
      'store/postgres-sql.ts',
      'store/sqlite-schema.ts',
      'store/sqlite-sql.ts',
    ]);
  });
});
