import { CHANGE_PAYOUT, CHANGE_PHONE, CONFIRM_PHONE, maskAccountNumber } from '../domain.ts';
import type { DemoUser, PayoutAccount } from '../db.ts';
import { maskDestination } from 'hosted-sms-verify-kit';
import { formatTime, html, page, type DemoTexts, type Viewer } from './layout.ts';

export interface HomeContext {
  t: DemoTexts;
  viewer: Viewer;
  user: DemoUser;
  payout: PayoutAccount | undefined;
  /** The kit's CSRF token for the start route. */
  kitCsrf: string;
  startPath: string;
}

/** The signed-in home: the two guarded actions, each a POST to the kit's start route. */
export function homePage(ctx: HomeContext): string {
  const { user, payout, t } = ctx;
  const h = t.home;
  const verifiedAt = user.verifiedPhone === user.phone ? user.phoneVerifiedAt : null;
  const verified = verifiedAt !== null;
  return page({
    t,
    title: h.title,
    viewer: ctx.viewer,
    nav: 'home',
    body: html`<h1>${h.welcome(user.name.split(' ')[0] ?? '')}</h1>
<p class="lead">${h.lead}</p>
<div class="grid">
<section class="card" aria-labelledby="phone-title">
<div class="card-head"><h2 id="phone-title">${h.phone}</h2>
${verified ? html`<span class="badge ok">${h.verified}</span>` : html`<span class="badge warn">${h.notVerified}</span>`}
</div>
<p class="value">${maskDestination(user.phone)}</p>
<p class="muted">${verified ? h.confirmedAt(formatTime(verifiedAt)) : h.confirmHint}</p>
<form method="post" action="${ctx.startPath}">
<input type="hidden" name="_csrf" value="${ctx.kitCsrf}">
<input type="hidden" name="action" value="${CONFIRM_PHONE}">
<button class="btn block" type="submit">${verified ? h.confirmAgain : h.confirm}</button>
</form>
<form method="post" action="${ctx.startPath}">
<input type="hidden" name="_csrf" value="${ctx.kitCsrf}">
<input type="hidden" name="action" value="${CHANGE_PHONE}">
<label for="phone">${h.newPhone}</label>
<input type="tel" id="phone" name="phone" autocomplete="tel" required maxlength="40" placeholder="${h.phoneExample}"
  aria-describedby="phone-hint">
<p class="hint" id="phone-hint">${h.phoneHint}</p>
<button class="btn block secondary" type="submit">${h.changePhone}</button>
</form>
</section>
<section class="card" aria-labelledby="payout-title">
<div class="card-head"><h2 id="payout-title">${h.payout}</h2><span class="badge info">${h.sensitive}</span></div>
<p class="value">${payout === undefined ? h.none : maskAccountNumber(payout.accountNumber)}</p>
<p class="muted">${payout === undefined ? h.addHint : h.changedAt(formatTime(payout.changedAt))}</p>
<form method="post" action="${ctx.startPath}">
<input type="hidden" name="_csrf" value="${ctx.kitCsrf}">
<input type="hidden" name="action" value="${CHANGE_PAYOUT}">
<label for="accountNumber">${h.newAccount}</label>
<input type="text" id="accountNumber" name="accountNumber" inputmode="numeric" autocomplete="off" required
  minlength="8" maxlength="64" placeholder="${h.accountExample}" pattern="[0-9 \\-]{8,64}"
  aria-describedby="accountNumber-hint">
<p class="hint" id="accountNumber-hint">${h.accountHint}</p>
<button class="btn block" type="submit">${h.changePayout}</button>
</form>
</section>
</div>
<p class="note">${h.codesGoTo} <strong>${maskDestination(user.phone)}</strong>.
${h.activityNote} <a href="/activity">${t.nav.activity}</a>.</p>`,
  });
}
