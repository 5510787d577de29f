import { maskDestination } from 'hosted-sms-verify-kit';
import type { DemoUser } from '../db.ts';
import { html, initials, page, type DemoTexts } from './layout.ts';

/** Demo sign-in: pick a seeded user (no passwords; this is about the verification, not the login). */
export function signinPage(ctx: { t: DemoTexts; users: DemoUser[]; csrf: string; error?: string }): string {
  const { t } = ctx;
  return page({
    t,
    title: t.signin.title,
    narrow: true,
    body: html`<h1>${t.signin.heading}</h1>
<p class="lead">${t.signin.lead}</p>
${ctx.error === undefined ? '' : html`<p class="alert bad" role="alert">${ctx.error}</p>`}
<div class="card users">
${ctx.users.map(
  (user) => html`<div class="user">
<span class="avatar" aria-hidden="true">${initials(user.name)}</span>
<div class="meta"><strong>${user.name}</strong><span>${user.email} · ${maskDestination(user.phone)}</span></div>
<form method="post" action="/signin">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<input type="hidden" name="userId" value="${user.id}">
<button class="btn small" type="submit" aria-label="${t.signin.buttonLabel(user.name)}">${t.signin.button}</button>
</form>
</div>`,
)}
</div>
<p class="note">${t.signin.note}</p>`,
  });
}
