/**
 * Where a page sends the browser by script or by a link, as the redirect checks read it: a planted
 * value in a script, an event handler, or a link, form or frame leaving the app's origin is an exit;
 * the same value in a link on the app's own origin (its query kept), in a comment, in plain text or
 * in an answer that is no page is not.
 */
import { describe, expect, it } from 'vitest';
import { plantedExit } from '../../testing/audit/page-exits.ts';

const ORIGIN = 'http://localhost:3000';
const PAGE = `${ORIGIN}/done`;
const PLANTED = ['https://evil.example/audit', '//evil.example/audit', 'javascript:alert(1)', '//evil.example'];
const exit = (html: string, type = 'text/html; charset=utf-8') => plantedExit(html, type, PAGE, ORIGIN, PLANTED);

describe('plantedExit', () => {
  it.each([
    ['<script>location.replace("https:\\/\\/evil.example\\/audit")</script>', 'a <script>'],
    ['<SCRIPT type=module>location = "https:\\u002F\\u002Fevil.example\\u002Faudit"</SCRIPT>', 'a <script>'],
    [`<body onload="location.href='//evil.example/audit'">`, 'an onload handler'],
    ['<a id=go href="https://evil.example/audit">Continue</a>', 'a <a href>'],
    ['<a href="javascript:alert(1)">Continue</a>', 'a <a href>'],
    ['<form action="https://EVIL.example/audit" method=post></form>', 'a <form action>'],
    ['<iframe src="//evil.example/audit"></iframe>', 'a <iframe src>'],
    // A script's text is text: a `<!--` in it hides nothing after the script.
    ['<script>if (seen<!--once) go()</script><a href="https://evil.example/audit">Continue</a>', 'a <a href>'],
    // A tag a script writes into the page, its value in entities.
    [`<script>el.innerHTML = '<a href="https:&#x2F;&#x2F;evil.example/audit">x</a>'</script>`, 'a <script>'],
    // The browser percent-decodes a javascript: URL before it runs it.
    [`<a href="javascript:location='https:%2F%2Fevil.example%2Faudit'">Continue</a>`, 'a <a href>'],
    [
      `<button formaction="javascript:location.replace('%2F%2Fevil.example%2Faudit')">Go</button>`,
      'a <button formaction>',
    ],
  ])('%s: %s', (html, where) => {
    expect(exit(html)).toBe(where);
  });

  it.each([
    // A language switch keeping the page's query: a link on the app's own origin.
    '<a href="/done?lang=fr&amp;next=https%3A%2F%2Fevil.example%2Faudit">Français</a>',
    '<a href="http://localhost:3000/x?next=https://evil.example/audit">x</a>',
    '<!-- <script>location = "https://evil.example/audit"</script> -->',
    '<p>You came from https://evil.example/audit</p>',
    // The request's own URL, as a script may keep it for analytics: percent-encoded.
    '<script>track("/done?next=https%3A%2F%2Fevil.example%2Faudit")</script>',
    '<script>location.replace("/start-again")</script><a href="https://docs.example/help">Help</a>',
    '<a href="javascript:void(0)">Menu</a><a href="javascript:history.back()">Back</a>',
  ])('no exit: %s', (html) => {
    expect(exit(html)).toBeUndefined();
  });

  it('a page of 20 000 inline scripts is read in one pass (a big server-rendered page never holds the redirect checks)', () => {
    const html = `${'<script>track(1)</script>'.repeat(20_000)}<script>location = "//evil.example/audit"</script>`;
    const started = Date.now();
    expect(exit(html)).toBe('a <script>');
    // Each script's end searched from its start: once through the page, never once per script.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a page of 60 000 script tags never closed is read in one pass, the first holding the rest as its text', () => {
    const html = `<script>location = "//evil.example/audit"; ${'<script>'.repeat(60_000)}`;
    const started = Date.now();
    expect(exit(html)).toBe('a <script>');
    expect(exit(`<script>track(1); ${'<script>'.repeat(60_000)}`)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('an answer that is no page (JSON) has no exit', () => {
    expect(exit('{"next":"https://evil.example/audit"}', 'application/json')).toBeUndefined();
  });
});
