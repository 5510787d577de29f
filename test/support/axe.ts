/**
 * Accessibility checks in the real browser: axe-core (from its npm package, never a download)
 * evaluated in the page, WCAG 2.0/2.1 A and AA rules only.
 *
 * The source is evaluated with page.evaluate rather than a <script> tag, so pages with a strict
 * nonce-based Content-Security-Policy (the kit's, the emulator's) are checked like any other.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] as const;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary: string }>;
}

/** Pages whose later documents get axe as an init script. */
const preloaded = new WeakSet<Page>();

/**
 * Runs axe on the page as it is now and returns its violations (nothing is asserted).
 *
 * The first check of a page evaluates axe's source; from then on the page's later documents get it
 * as an init script (CSP does not apply to those either). Evaluating the 500 kB source again on
 * every document took longer than the checks themselves; an init script is compiled once.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!preloaded.has(page)) {
    preloaded.add(page);
    await page.addInitScript(AXE_SOURCE);
  }
  const loaded = await page.evaluate(() => typeof (window as { axe?: unknown }).axe === 'object');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  return page.evaluate(
    async (tags) => {
      type Axe = { run(context: unknown, options: unknown): Promise<{ violations: unknown[] }> };
      const axe = (window as unknown as { axe: Axe }).axe;
      const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return (result.violations as Array<Record<string, unknown>>).map((v) => ({
        id: String(v.id),
        impact: (v.impact as string | null) ?? null,
        help: String(v.help),
        nodes: (v.nodes as Array<Record<string, unknown>>).map((n) => ({
          target: (n.target as unknown[]).map(String),
          failureSummary: String(n.failureSummary ?? ''),
        })),
      }));
    },
    [...WCAG_TAGS],
  );
}

/** One line per failing element: rule id, impact, target selector, and what to fix. */
export function formatViolations(violations: AxeViolation[]): string {
  return violations
    .flatMap((v) =>
      v.nodes.map((n) => {
        const fix = n.failureSummary.replace(/\s+/g, ' ');
        return `${v.id} (${v.impact ?? 'n/a'}) at ${n.target.join(' ')}: ${v.help}. ${fix}`;
      }),
    )
    .join('\n');
}

/** Fails with a readable list (rule id + target) when axe finds any WCAG 2.1 A/AA violation. */
export async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  const violations = await axeViolations(page);
  expect(formatViolations(violations), `axe violations on ${label} (${page.url()})`).toBe('');
}

/** The response's CSP with `script-src 'none'` (replacing any script-src the page had). */
function withoutScripts(csp: string | undefined): string {
  if (csp === undefined) return "script-src 'none'";
  const directive = /script-src[^;]*/;
  return directive.test(csp) ? csp.replace(directive, "script-src 'none'") : `${csp}; script-src 'none'`;
}

/**
 * Renders every document the page opens as a browser without JavaScript would: each response's
 * CSP gets `script-src 'none'`, so no page script runs. (A context with `javaScriptEnabled: false`
 * would do the same, but then axe itself could not run.) Responses are passed on unchanged otherwise.
 */
export async function withoutPageScripts(page: Page): Promise<void> {
  await page.route(
    () => true,
    async (route) => {
      if (route.request().resourceType() !== 'document') {
        await route.continue();
        return;
      }
      const response = await route.fetch({ maxRedirects: 0 });
      const headers = { ...response.headers() };
      const csp = headers['content-security-policy'];
      headers['content-security-policy'] = withoutScripts(csp);
      await route.fulfill({ response, headers });
    },
  );
}
