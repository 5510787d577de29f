import type { AttemptSummary } from 'hosted-sms-verify-kit';
import { ACTION_LABELS } from '../actions.ts';
import { formatTime, html, page, type Viewer } from './layout.ts';

const OUTCOME_LABELS: Record<AttemptSummary['outcome'], string> = {
  pending: 'Waiting for the code',
  fulfilled: 'Verified and applied',
  failed: 'Not verified',
  expired: 'Expired',
  superseded: 'Replaced by a newer request',
};

const SOURCE_LABELS: Record<string, string> = {
  landing: 'you came back to the site',
  mobile: 'the mobile app',
  sweep: 'the background check',
};

/** "2 min ago", "3 h ago", "5 days ago". */
export function formatAge(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

/** The signed-in user's verification attempts, from the kit's read API (kit.attempts.find). */
export function verificationsPage(ctx: { viewer: Viewer; attempts: AttemptSummary[]; now: number }): string {
  return page({
    title: 'Verifications',
    viewer: ctx.viewer,
    nav: 'verifications',
    body: html`<h1>Verifications</h1>
<p class="lead">Every verification you started, newest first, as the kit keeps it: the number is masked, and
after 30 days the details of a finished verification are removed.</p>
<section class="card">
${
  ctx.attempts.length === 0
    ? html`<p class="empty">No verifications yet.</p>`
    : html`<table>
<thead><tr><th scope="col">Started</th><th scope="col">Action</th><th scope="col">Outcome</th><th scope="col">Settled by</th><th scope="col">Number</th></tr></thead>
<tbody>
${ctx.attempts.map(
  (attempt) => html`<tr data-session-id="${attempt.sessionId}" data-outcome="${attempt.outcome}">
<td class="when"><time datetime="${new Date(attempt.createdAt).toISOString()}" title="${formatTime(attempt.createdAt)}">${formatAge(ctx.now - attempt.createdAt)}</time></td>
<td>${ACTION_LABELS[attempt.action] ?? attempt.action}</td>
<td>${OUTCOME_LABELS[attempt.outcome]}${attempt.reason === null ? '' : html` (${attempt.reason})`}</td>
<td>${attempt.source === null ? '—' : (SOURCE_LABELS[attempt.source] ?? attempt.source)}</td>
<td>${attempt.destination ?? 'removed'}</td>
</tr>`,
)}
</tbody>
</table>`
}
</section>`,
  });
}
