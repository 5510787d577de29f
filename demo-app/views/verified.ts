import type { ActivityEntry } from '../db.ts';
import { formatTime, html, page, type Viewer } from './layout.ts';

/** An action's successPath: what was just done, read back from the demo's own tables. */
export function verifiedPage(ctx: { viewer: Viewer; title: string; text: string; latest: ActivityEntry | undefined }): string {
  return page({
    title: ctx.title,
    viewer: ctx.viewer,
    narrow: true,
    body: html`<section class="card result ok">
<div class="icon" aria-hidden="true">✓</div>
<h1>${ctx.title}</h1>
<p>${ctx.text}</p>
${
  ctx.latest === undefined
    ? ''
    : html`<dl class="facts"><dt>Change</dt><dd>${ctx.latest.detail}</dd><dt>When</dt><dd>${formatTime(ctx.latest.at)}</dd>
<dt>Session</dt><dd><code>${ctx.latest.sessionId}</code></dd></dl>`
}
<div class="actions"><a class="btn" href="/">Back to home</a><a class="btn secondary" href="/activity">View activity</a></div>
</section>`,
  });
}
