import type { AttemptSummary } from 'hosted-sms-verify-kit';
import { actionLabel, formatTime, html, page, type DemoTexts, type Viewer } from './layout.ts';

/** "2 min ago", "3 h ago", "5 days ago", in the page's language. */
export function formatAge(ms: number, t: DemoTexts['verifications']): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 1) return t.justNow;
  if (minutes < 60) return t.minutesAgo(minutes);
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return t.hoursAgo(hours);
  return t.daysAgo(Math.floor(hours / 24));
}

/** The signed-in user's verification attempts, from the kit's read API (kit.attempts.find). */
export function verificationsPage(ctx: {
  t: DemoTexts;
  viewer: Viewer;
  attempts: AttemptSummary[];
  now: number;
}): string {
  const v = ctx.t.verifications;
  return page({
    t: ctx.t,
    title: v.title,
    viewer: ctx.viewer,
    nav: 'verifications',
    body: html`<h1>${v.title}</h1>
<p class="lead">${v.lead}</p>
<section class="card">
${
  ctx.attempts.length === 0
    ? html`<p class="empty">${v.empty}</p>`
    : html`<table>
<thead><tr><th scope="col">${v.started}</th><th scope="col">${v.action}</th><th scope="col">${v.outcome}</th>
<th scope="col">${v.settledBy}</th><th scope="col">${v.number}</th></tr></thead>
<tbody>
${ctx.attempts.map(
  (attempt) => html`<tr data-session-id="${attempt.sessionId}" data-outcome="${attempt.outcome}">
<td class="when"><time datetime="${new Date(attempt.createdAt).toISOString()}"
  title="${formatTime(attempt.createdAt)}">${formatAge(ctx.now - attempt.createdAt, v)}</time></td>
<td>${actionLabel(ctx.t, attempt.action)}</td>
<td>${v.outcomes[attempt.outcome]}${attempt.reason === null ? '' : html` (${attempt.reason})`}</td>
<td>${attempt.source === null ? '—' : (v.sources[attempt.source] ?? attempt.source)}</td>
<td>${attempt.destination ?? v.removed}</td>
</tr>`,
)}
</tbody>
</table>`
}
</section>`,
  });
}
