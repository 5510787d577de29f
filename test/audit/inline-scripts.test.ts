/**
 * The leak checks read the imports of a page's inline scripts. A script's text was found by a
 * pattern that searched to the page's end for every opening tag never closed, so a page of 60 000
 * `<script>` tags took seconds per read (a 4 MB page, minutes) on each page the run saw; each
 * script's end is now searched from its start, and one never closed holds the rest of the page.
 */
import { describe, expect, it } from 'vitest';
import { inlineScriptsOf } from '../../testing/audit/subresources.ts';

describe("a page's inline scripts", () => {
  it('are read as a browser reads them: each to its end, none in a comment, one never closed to the page end', () => {
    const html =
      '<p>a</p><script type="module">import "/a.js";</script><!-- <script>old()</script> -->' +
      '<SCRIPT>b()</SCRIPT ><script src="/c.js"></script><script>last(); <p>rest';
    expect(inlineScriptsOf(html)).toEqual(['import "/a.js";', 'b()', '', 'last(); <p>rest']);
  });

  it('a page of 60 000 script tags never closed is read in one pass', () => {
    const html = `<script>track(1); ${'<script>'.repeat(60_000)}`;
    const started = Date.now();
    expect(inlineScriptsOf(html)).toHaveLength(1);
    expect(inlineScriptsOf(`${'<script>track(1)</script>'.repeat(20_000)}`)).toHaveLength(20_000);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
