import type { ActivityEntry, OutboxEntry } from '../db.ts';
import { actionLabel, formatTime, html, page, type DemoTexts, type Viewer } from './layout.ts';

/** The user's fulfilled actions, newest first: one row per verification session; then the emails sent. */
export function activityPage(ctx: {
  t: DemoTexts;
  viewer: Viewer;
  entries: ActivityEntry[];
  emails: OutboxEntry[];
}): string {
  const a = ctx.t.activity;
  return page({
    t: ctx.t,
    title: a.title,
    viewer: ctx.viewer,
    nav: 'activity',
    body: html`<h1>${a.title}</h1>
<p class="lead">${a.lead}</p>
<section class="card" aria-labelledby="activity-caption">
${
  ctx.entries.length === 0
    ? html`<p class="empty" id="activity-caption">${a.empty} <a href="/">${a.emptyLink}</a>.</p>`
    : html`<table>
<caption id="activity-caption" class="sr-only">${a.caption}</caption>
<thead><tr><th scope="col">${a.when}</th><th scope="col">${a.action}</th>
<th scope="col">${a.details}</th><th scope="col">${a.session}</th></tr></thead>
<tbody>
${ctx.entries.map(
  (entry) => html`<tr data-session-id="${entry.sessionId}">
<td class="when">${formatTime(entry.at)}</td><td>${actionLabel(ctx.t, entry.action)}</td>
<td>${entry.detail}</td><td><code>${entry.sessionId}</code></td>
</tr>`,
)}
</tbody>
</table>`
}
</section>
<h2>${a.emailsTitle}</h2>
<p class="lead">${a.emailsLead}</p>
<section class="card" id="outbox">
${
  ctx.emails.length === 0
    ? html`<p class="empty">${a.noEmails}</p>`
    : html`<ul class="outbox">
${ctx.emails.map(
  (email) => html`<li data-session-id="${email.sessionId}" data-outcome="${email.outcome}">
<span class="when">${formatTime(email.at)}</span> <strong>${email.subject}</strong><br>${email.body}</li>`,
)}
</ul>`
}
</section>`,
  });
}
