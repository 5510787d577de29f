/** The auto-submit page that carries the handoff to the hosted page in a POST body. */
import { html, scriptJson } from './html.ts';
import type { KitMessages } from './messages.ts';
import { layout } from './pages.ts';

export interface HandoffPage {
  verifyUrl: string;
  handoff: string;
  /** Server-side path shown instead of re-sending a used or restored form. */
  startAgainUrl: string;
  /** The number the code goes to, masked ("•• 78"), for an action that texts a typed number. */
  maskedNumber?: string;
}

/**
 * The auto-submit page. It POSTs `hx` to verifyUrl exactly as returned, then blanks the field. If
 * the page is ever shown again (back/forward cache, or a restored copy whose sessionStorage flag
 * says it was already submitted) it never re-sends the handoff: it goes to the start-again page.
 * Not overridable: its script and headers are the security boundary.
 */
export function handoffPage(ctx: HandoffPage, nonce: string, messages: KitMessages): string {
  const flagKey = `verify-kit-handoff-${nonce}`;
  const script = html`<script nonce="${nonce}">
(function () {
  var form = document.getElementById('verify-kit-handoff');
  var again = ${scriptJson(ctx.startAgainUrl)};
  var key = ${scriptJson(flagKey)};
  function blank() { var f = form.elements.namedItem('hx'); if (f) f.value = ''; }
  function leave() { blank(); window.location.replace(again); }
  var used = false;
  try { used = window.sessionStorage.getItem(key) === '1'; } catch (e) {}
  if (used) { leave(); return; }
  window.addEventListener('pageshow', function (event) { if (event.persisted) leave(); });
  form.addEventListener('submit', function () {
    try { window.sessionStorage.setItem(key, '1'); } catch (e) {}
    setTimeout(blank, 0);
  });
  try { window.sessionStorage.setItem(key, '1'); } catch (e) {}
  form.submit();
  setTimeout(blank, 0);
})();
</script>`;
  const t = messages.handoff;
  return layout({
    title: t.title,
    nonce,
    messages,
    script,
    body: html`<h1>${t.title}</h1>
<p>${t.text}</p>
${ctx.maskedNumber === undefined ? '' : html`<p>${messages.codeGoesTo(ctx.maskedNumber)}</p>`}
<form id="verify-kit-handoff" method="post" action="${ctx.verifyUrl}">
<input type="hidden" name="hx" value="${ctx.handoff}">
<button type="submit">${t.continue}</button>
</form>`,
  });
}
