import { CHANGE_PAYOUT, CONFIRM_PHONE, maskAccountNumber } from '../actions.ts';
import type { DemoUser, PayoutAccount } from '../db.ts';
import { formatTime, html, page, type Viewer } from './layout.ts';

export interface HomeContext {
  viewer: Viewer;
  user: DemoUser;
  payout: PayoutAccount | undefined;
  /** The kit's CSRF token for the start route. */
  kitCsrf: string;
  startPath: string;
}

/** The signed-in home: the two guarded actions, each a POST to the kit's start route. */
export function homePage(ctx: HomeContext): string {
  const { user, payout } = ctx;
  const verified = user.verifiedPhone === user.phone && user.phoneVerifiedAt !== null;
  return page({
    title: 'Home',
    viewer: ctx.viewer,
    nav: 'home',
    body: html`<h1>Welcome back, ${user.name.split(' ')[0]}</h1>
<p class="lead">Both actions below are confirmed with a one-time code sent by SMS to your phone, on the verification service's own page.</p>
<div class="grid">
<section class="card" aria-labelledby="phone-title">
<div class="card-head"><h2 id="phone-title">Phone number</h2>
${verified ? html`<span class="badge ok">✓ Verified</span>` : html`<span class="badge warn">Not verified</span>`}</div>
<p class="value">${user.phone}</p>
<p class="muted">${verified ? html`Confirmed ${formatTime(user.phoneVerifiedAt!)}.` : 'Confirm you can receive texts at this number.'}</p>
<form method="post" action="${ctx.startPath}">
<input type="hidden" name="_csrf" value="${ctx.kitCsrf}">
<input type="hidden" name="action" value="${CONFIRM_PHONE}">
<button class="btn block" type="submit">${verified ? 'Confirm it again' : 'Confirm your phone number'}</button>
</form>
</section>
<section class="card" aria-labelledby="payout-title">
<div class="card-head"><h2 id="payout-title">Payout account</h2><span class="badge info">Sensitive</span></div>
<p class="value">${payout === undefined ? 'None yet' : maskAccountNumber(payout.accountNumber)}</p>
<p class="muted">${payout === undefined ? 'Add the account your payouts go to.' : html`Changed ${formatTime(payout.changedAt)}.`}</p>
<form method="post" action="${ctx.startPath}">
<input type="hidden" name="_csrf" value="${ctx.kitCsrf}">
<input type="hidden" name="action" value="${CHANGE_PAYOUT}">
<label for="accountNumber">New account number</label>
<input type="text" id="accountNumber" name="accountNumber" inputmode="numeric" autocomplete="off" required minlength="8" maxlength="64" placeholder="e.g. 0123 4567 8901" pattern="[0-9 \\-]{8,64}">
<p class="hint">8 to 17 digits. Applied only after you confirm with an SMS code.</p>
<button class="btn block" type="submit">Change payout account</button>
</form>
</section>
</div>
<p class="note">Codes go to <strong>${user.phone}</strong>. With the bundled emulator, read them in its inbox. Your completed verifications are listed under <a href="/activity">Activity</a>.</p>`,
  });
}
