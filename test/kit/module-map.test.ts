/**
 * The kit's module boundaries, checked from its import graph (type-only imports included):
 * - the package entry point only re-exports;
 * - every module sits in a folder named for its concern, and the folders keep their order:
 *   `pages/` draws what it is handed and never imports `routes/`, `store/` imports nothing above
 *   it, and each store's dialect folder imports only its own files and the shared contract;
 * - no import circles, in the kit or in the demo;
 * - the landing reaches the rest of the kit only through the return handling, the pages and the
 *   user lookup; each store keeps its SQL text in its SQL modules (and its migrations in another);
 * - the emulator keeps a short top (composition, context, errors, clock) and a folder per concern;
 *   its configuration is pure parsing that imports nothing else of it; it never imports what
 *   `/testing` offers integrators, and neither it nor `testing/` imports the kit (but for leaves:
 *   the secret's spellings and what a text shows, which the kit's redaction and the audit share,
 *   and the remembered secrets, which the testing helpers' page excerpts redact);
 * - no import circles anywhere in the house: kit, emulator, testing, CLI and demo together.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/** Every .ts file under `dir` (relative to the repository), mapped to the files it imports. */
function importGraph(dir: string): Map<string, string[]> {
  const files = readdirSync(path.join(repo, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.posix.join(dir, name.split(path.sep).join('/')));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(path.join(repo, file), 'utf8');
    const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*'(\.[^']+)'/gm)].map((m) => m[1]!);
    graph.set(file, [...new Set(specifiers.map((s) => path.posix.join(path.posix.dirname(file), s)))]);
  }
  return graph;
}

/** The strongly connected groups of more than one file (Tarjan): each is an import circle. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const dep of graph.get(file) ?? []) {
      if (!graph.has(dep)) continue;
      if (!index.has(dep)) {
        visit(dep);
        low.set(file, Math.min(low.get(file)!, low.get(dep)!));
      } else if (onStack.has(dep)) {
        low.set(file, Math.min(low.get(file)!, index.get(dep)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1) found.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** The imports from files under `from` into files under any of `into`, as "importer -> imported". */
function importsBetween(graph: Map<string, string[]>, from: string, into: readonly string[]): string[] {
  return [...graph]
    .filter(([file]) => file.startsWith(from))
    .flatMap(([file, deps]) =>
      deps.filter((dep) => into.some((p) => dep.startsWith(p))).map((dep) => `${file} -> ${dep}`),
    );
}

/** Statements without comments and blank lines, one per entry (multi-line statements joined). */
function statements(file: string): string[] {
  const code = readFileSync(path.join(repo, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  return code
    .split(';')
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter((statement) => statement !== '');
}

const kit = importGraph('middleware');
const CONCERNS = [
  'options',
  'routes',
  'fulfil',
  'sweep',
  'pages',
  'client',
  'limits',
  'numbers',
  'pumping',
  'store',
  'step-up',
];
/** The few modules every concern shares stay at the top, beside the entry point and the factory. */
const TOP = [
  'index.ts',
  'create-kit.ts',
  'context.ts',
  'types.ts',
  'errors.ts',
  'logger.ts',
  'deadline.ts',
  'telemetry.ts',
  'attempts.ts',
  'secret-spellings.ts',
  'shown-text.ts',
  'printable-errors.ts',
  'closest-name.ts',
];

const emulator = importGraph('emulator');
const EMULATOR_CONCERNS = ['api', 'hosted', 'sms', 'passkeys', 'control', 'config'];
/** What composes the emulator and what every concern shares; everything else sits in a concern's folder. */
const EMULATOR_TOP = ['index.ts', 'server.ts', 'app.ts', 'context.ts', 'errors.ts', 'clock.ts'];
const testing = importGraph('testing');
const TESTING_TOP = [
  'testing.ts',
  'test-browser.ts',
  'hosted-walk.ts',
  'step-up.ts',
  'entered-number.ts',
  'app-and-emulator.ts',
  'html.ts',
  'html-forms.ts',
  'html-page-controls.ts',
  'html-form-entries.ts',
  'named-url.ts',
  'loopback-fetch.ts',
];
const TESTING_CONCERNS = ['audit'];
const HOUSE = ['middleware', 'emulator', 'testing', 'cli', 'demo-app'];

/** Files of `graph` (under `root/`) that are neither one of `top` nor inside one of `concerns`. */
function misplacedIn(graph: Map<string, string[]>, top: readonly string[], concerns: readonly string[]): string[] {
  return [...graph.keys()].filter((file) => {
    const [, first, second] = file.split('/');
    return second === undefined ? !top.includes(first!) : !concerns.includes(first!);
  });
}

describe('module map', () => {
  it('index.ts only re-exports: every statement is `export … from`', () => {
    const notReExports = statements('middleware/index.ts').filter(
      (s) => !/^export (type )?(\{[^}]*\}|\*) from '/.test(s),
    );
    expect(notReExports).toEqual([]);
  });

  it('every module sits in a folder named for its concern, or is one of the shared top-level modules', () => {
    expect(misplacedIn(kit, TOP, CONCERNS)).toEqual([]);
  });

  it('the kit and the demo have no import circles', () => {
    expect(circles(kit)).toEqual([]);
    expect(circles(importGraph('demo-app'))).toEqual([]);
  });

  it('pages/ only draws: it never imports routes/, the context or the fulfil path', () => {
    expect(
      importsBetween(kit, 'middleware/pages/', ['middleware/routes/', 'middleware/context.ts', 'middleware/fulfil/']),
    ).toEqual([]);
  });

  it('store/ imports nothing above it: only the shared types and errors', () => {
    const above = importsBetween(kit, 'middleware/store/', ['middleware/']).filter(
      (edge) => !/ -> middleware\/(store\/|types\.ts$|errors\.ts$)/.test(edge),
    );
    expect(above).toEqual([]);
  });

  it('numbers/ reads, polices and masks numbers on its own: it imports no other kit module', () => {
    expect(
      importsBetween(kit, 'middleware/numbers/', ['middleware/']).filter((e) => !/ -> middleware\/numbers\//.test(e)),
    ).toEqual([]);
  });

  it('pumping/ sits below the routes and above the store: it never imports routes/, fulfil/, sweep/, pages/, options/ or the context', () => {
    expect(
      importsBetween(kit, 'middleware/pumping/', [
        'middleware/routes/',
        'middleware/fulfil/',
        'middleware/sweep/',
        'middleware/pages/',
        'middleware/options/',
        'middleware/context.ts',
        'middleware/create-kit.ts',
      ]),
    ).toEqual([]);
  });

  it("each store's folder imports only its own files and the shared contract, never the other store", () => {
    expect(importsBetween(kit, 'middleware/store/sqlite/', ['middleware/store/postgres/'])).toEqual([]);
    expect(importsBetween(kit, 'middleware/store/postgres/', ['middleware/store/sqlite/'])).toEqual([]);
  });

  it('the landing imports values only from the return handling, the pages, the user lookup, the restart form and the success path', () => {
    const valueImports = statements('middleware/routes/landing.ts')
      .filter((s) => s.startsWith('import ') && !s.startsWith('import type '))
      .map((s) => /from '([^']+)'$/.exec(s)?.[1]);
    expect(valueImports.sort()).toEqual([
      '../pages/page-headers.ts',
      '../pages/pages.ts',
      './complete-return.ts',
      './restart-form.ts',
      './state.ts',
      './success-path.ts',
      './user.ts',
    ]);
  });

  it("names the kit's tables only in each store's SQL modules and its migrations", () => {
    const naming = [...kit.keys()].filter((file) =>
      /verify_kit_(attempts|outcome_events|start_budgets)/.test(readFileSync(path.join(repo, file), 'utf8')),
    );
    expect(naming.sort()).toEqual([
      'middleware/store/postgres/postgres-budget-migrations.ts',
      'middleware/store/postgres/postgres-budgets-sql.ts',
      'middleware/store/postgres/postgres-fulfil-sql.ts',
      'middleware/store/postgres/postgres-outbox-sql.ts',
      'middleware/store/postgres/postgres-pumping-sql.ts',
      'middleware/store/postgres/postgres-reads-and-retention-sql.ts',
      'middleware/store/postgres/postgres-schema.ts',
      'middleware/store/postgres/postgres-sql.ts',
      'middleware/store/postgres/postgres-step-up-sql.ts',
      'middleware/store/postgres/postgres-sweep-sql.ts',
      'middleware/store/sqlite/sqlite-schema.ts',
      'middleware/store/sqlite/sqlite-sql.ts',
    ]);
  });

  it("the emulator's modules sit in its concern folders, beside a short top that composes them", () => {
    expect(misplacedIn(emulator, EMULATOR_TOP, EMULATOR_CONCERNS)).toEqual([]);
  });

  it('what /testing offers integrators sits in testing/, beside the emulator and the kit', () => {
    expect(misplacedIn(testing, TESTING_TOP, TESTING_CONCERNS)).toEqual([]);
  });

  it("the emulator's configuration is pure parsing: config/ imports nothing of the emulator outside it", () => {
    expect(
      importsBetween(emulator, 'emulator/config/', ['emulator/']).filter((e) => !/ -> emulator\/config\//.test(e)),
    ).toEqual([]);
  });

  it("the emulator never imports testing/, and neither imports the kit but for the leaves on the secret's spellings, what a text shows, printable errors, the closest name, what may be a phone number, the one-value flags, the configuration module's loading and the remembered secrets", () => {
    expect(importsBetween(emulator, 'emulator/', ['testing/', 'middleware/'])).toEqual([]);
    expect(
      importsBetween(testing, 'testing/', ['middleware/']).filter(
        (edge) =>
          !edge.endsWith(' -> middleware/secret-spellings.ts') &&
          !edge.endsWith(' -> middleware/shown-text.ts') &&
          !edge.endsWith(' -> middleware/printable-errors.ts') &&
          !edge.endsWith(' -> middleware/closest-name.ts') &&
          !edge.endsWith(' -> middleware/numbers/mask-number.ts') &&
          !edge.endsWith(' -> middleware/options/command-flags.ts') &&
          !edge.endsWith(' -> middleware/options/config-module.ts') &&
          !edge.endsWith(' -> middleware/errors.ts'),
      ),
    ).toEqual([]);
  });

  it("the secret's spellings are a leaf: the kit's redaction and the audit share them, and they import nothing", () => {
    expect(kit.get('middleware/secret-spellings.ts')).toEqual([]);
    expect(statements('middleware/secret-spellings.ts').filter((s) => /^import\b/.test(s))).toEqual([]);
  });

  it("what a text shows is a leaf but for the kit's percent decoding: the redaction and the audit read alike", () =>
    expect(kit.get('middleware/shown-text.ts')).toEqual(['middleware/numbers/mask-number.ts']));

  it("what a command may print of an error is a leaf but for the secret's length and what may be a phone number: the commands, the sweep job and the audit share it", () => {
    expect(kit.get('middleware/printable-errors.ts')).toEqual([
      'middleware/numbers/mask-number.ts',
      'middleware/secret-spellings.ts',
    ]);
  });

  it("the remembered secrets and their redaction import only the secret's spellings and what a text shows: the kit's messages and the testing helpers' page excerpts redact alike", () => {
    expect(kit.get('middleware/errors.ts')).toEqual(['middleware/secret-spellings.ts', 'middleware/shown-text.ts']);
  });

  it("the name an option's error suggests is a leaf: the kit's option checks and the audit's share it", () => {
    expect(kit.get('middleware/closest-name.ts')).toEqual([]);
    expect(statements('middleware/closest-name.ts').filter((s) => /^import\b/.test(s))).toEqual([]);
  });

  it("loading a command's configuration module is a leaf: the sweep job and the audit refuse a file node does not load alike", () => {
    expect(kit.get('middleware/options/config-module.ts')).toEqual([]);
  });

  it("the flags a command takes once are a leaf: the kit's commands, the sweep job and the audit refuse a repeated flag alike", () => {
    expect(kit.get('middleware/options/command-flags.ts')).toEqual([]);
    expect(statements('middleware/options/command-flags.ts').filter((s) => /^import\b/.test(s))).toEqual([]);
  });

  it("what may be a phone number is a leaf: the kit's messages and the audit's masking count a number alike", () => {
    expect(kit.get('middleware/numbers/mask-number.ts')).toEqual([]);
  });

  it('the whole house has no import circles: kit, emulator, testing, CLI and demo together', () => {
    const house = new Map(HOUSE.flatMap((dir) => [...importGraph(dir)]));
    expect(circles(emulator)).toEqual([]);
    expect(circles(testing)).toEqual([]);
    expect(circles(house)).toEqual([]);
  });
});
