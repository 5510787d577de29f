import type { ActivityEntry } from '../db.ts';
import { formatTime, html, page, type DemoTexts, type Viewer } from './layout.ts';

/** An action's successPath: what was just done, read back from the demo's own tables. */
export function verifiedPage(ctx: {
  t: DemoTexts;
  viewer: Viewer;
  /** false when what the page reports was not done: no check mark, no success styling. */
  ok?: boolean;
  title: string;
  text: string;
  latest: ActivityEntry | undefined;
  /** The kit's one-time flash on arrival from the landing: what it just did. */
  landed?: string;
}): string {
  const v = ctx.t.verified;
  return page({
    t: ctx.t,
    title: ctx.title,
    viewer: ctx.viewer,
    narrow: true,
    body: html`<section class="card result${ctx.ok === false ? '' : ' ok'}">
${ctx.ok === false ? '' : html`<div class="icon" aria-hidden="true">✓</div>`}
<h1>${ctx.title}</h1>
${ctx.landed === undefined ? '' : html`<p id="landed" role="status"><strong>${ctx.landed}</strong></p>`}
<p>${ctx.text}</p>
${
  ctx.latest === undefined
    ? ''
    : html`<dl class="facts"><dt>${v.change}</dt><dd>${ctx.latest.detail}</dd>
<dt>${v.when}</dt><dd>${formatTime(ctx.latest.at)}</dd>
<dt>${v.session}</dt><dd><code>${ctx.latest.sessionId}</code></dd></dl>`
}
<div class="actions"><a class="btn" href="/">${ctx.t.backHome}</a>
<a class="btn secondary" href="/activity">${v.viewActivity}</a></div>
</section>`,
  });
}
