import type { DemoUser } from '../db.ts';
import { html, initials, page } from './layout.ts';

/** Demo sign-in: pick a seeded user (no passwords; this is about the verification, not the login). */
export function signinPage(ctx: { users: DemoUser[]; csrf: string; error?: string }): string {
  return page({
    title: 'Sign in',
    narrow: true,
    body: html`<h1>Sign in to the demo</h1>
<p class="lead">Pick a demo user. Each has a phone number on file; the SMS code goes to that number (read it from the emulator's inbox).</p>
${ctx.error === undefined ? '' : html`<p class="alert bad" role="alert">${ctx.error}</p>`}
<div class="card users">
${ctx.users.map(
  (user) => html`<div class="user">
<span class="avatar" aria-hidden="true">${initials(user.name)}</span>
<div class="meta"><strong>${user.name}</strong><span>${user.email} · ${user.phone}</span></div>
<form method="post" action="/signin">
<input type="hidden" name="_csrf" value="${ctx.csrf}">
<input type="hidden" name="userId" value="${user.id}">
<button class="btn small" type="submit" aria-label="Sign in as ${user.name}">Sign in</button>
</form>
</div>`,
)}
</div>
<p class="note">Sign-in here is deliberately passwordless: the demo is about what happens <em>after</em> sign-in, when an action needs a fresh SMS verification.</p>`,
  });
}
