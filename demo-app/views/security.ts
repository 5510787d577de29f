import { html, page, type DemoTexts, type Viewer } from './layout.ts';

/** The Security page (behind a 10-minute step-up guard): recovery codes and the form that replaces them. */
export function securityPage(ctx: {
  t: DemoTexts;
  viewer: Viewer;
  codes: readonly string[];
  /** Shown once after the codes were replaced. */
  replaced: boolean;
}): string {
  const s = ctx.t.security;
  return page({
    t: ctx.t,
    title: s.title,
    viewer: ctx.viewer,
    nav: 'security',
    body: html`<h1>${s.title}</h1>
<p class="lead">${s.lead}</p>
${ctx.replaced ? html`<p id="replaced" role="status"><strong>${s.replaced}</strong></p>` : ''}
<section class="card" aria-labelledby="codes-heading">
<h2 id="codes-heading">${s.codes}</h2>
<p>${s.codesNote}</p>
<ul id="recovery-codes" class="codes">${ctx.codes.map((code) => html`<li><code>${code}</code></li>`)}</ul>
<form method="post" action="/security/recovery-codes">
<input type="hidden" name="_csrf" value="${ctx.viewer.csrf}">
<p class="hint" id="replace-hint">${s.replaceHint}</p>
<button class="btn" type="submit" aria-describedby="replace-hint">${s.replace}</button>
</form>
</section>`,
  });
}
