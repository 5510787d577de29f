import { ACTION_LABELS } from '../actions.ts';
import type { ActivityEntry, OutboxEntry } from '../db.ts';
import { formatTime, html, page, type Viewer } from './layout.ts';

/** The user's fulfilled actions, newest first: one row per verification session. */
export function activityPage(ctx: { viewer: Viewer; entries: ActivityEntry[]; emails: OutboxEntry[] }): string {
  return page({
    title: 'Activity',
    viewer: ctx.viewer,
    nav: 'activity',
    body: html`<h1>Activity</h1>
<p class="lead">Every action below ran exactly once, in the same database transaction that marked its verification session fulfilled.</p>
<section class="card">
${
  ctx.entries.length === 0
    ? html`<p class="empty">Nothing yet. Confirm your phone number or change your payout account from <a href="/">Home</a>.</p>`
    : html`<table>
<thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Details</th><th scope="col">Verification session</th></tr></thead>
<tbody>
${ctx.entries.map(
  (entry) => html`<tr data-session-id="${entry.sessionId}">
<td class="when">${formatTime(entry.at)}</td><td>${ACTION_LABELS[entry.action] ?? entry.action}</td><td>${entry.detail}</td><td><code>${entry.sessionId}</code></td>
</tr>`,
)}
</tbody>
</table>`
}
</section>
<h2>Emails sent</h2>
<p class="lead">Sent after each outcome by the kit's onOutcome hook, outside the transaction
(at least once; one per outcome).</p>
<section class="card" id="outbox">
${
  ctx.emails.length === 0
    ? html`<p class="empty">No emails yet.</p>`
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
