/**
 * The pages in front of an integrator's guarded route (requireRecentVerification): "Confirm it's
 * you" (one button that starts a verification: a GET never sends a text), the confirmation of a
 * kept form, and the refusals. Rendering only: the guard hands over every value.
 */
import { maskNumbersInPath } from '../numbers/mask-number.ts';
import { html } from './html.ts';
import type { KitMessages } from './messages.ts';
import { layout } from './pages.ts';

/** "Confirm it's you": the start form, with the kept request's id. */
export interface StepUpRequiredPage {
  startPath: string;
  csrfToken: string;
  scope: string;
  intentId: string;
  /** The user's number, masked. */
  maskedNumber: string;
  /** What the guarded route does (the scope's label in the request's language), if any. */
  label: string | undefined;
  /** Why a user who just verified is asked again, if they are. */
  explanation: 'tooOld' | 'otherResource' | undefined;
}

/**
 * The kept form, shown after the verification at the kit's step-up page (`?intent=`); confirming
 * posts to that same address, which sends it on to the path it was kept at.
 */
export interface StepUpConfirmPage {
  /**
   * The kept request's method and path, named so the user does not confirm blind (never its fields);
   * the path is shown with any phone number in it masked (the user did not type it here).
   */
  method: string;
  path: string;
  csrfToken: string;
  intentField: string;
  intentId: string;
  /** What the guarded route does (the scope's label in the page's language); else its masked path. */
  label: string | undefined;
  /** The kept method when a form cannot send it (not POST), as `_method`: the usual method override. */
  methodOverride: string | undefined;
  /** Whether a verification granted this form's scope and resource since it was kept: only then does the page say so. */
  verified: boolean;
}

export function stepUpRequiredPage(ctx: StepUpRequiredPage, nonce: string, messages: KitMessages): string {
  const t = messages.stepUp;
  return layout({
    title: t.title,
    nonce,
    messages,
    body: html`<h1>${t.title}</h1>
${ctx.explanation === undefined ? '' : html`<p role="alert">${t[ctx.explanation]}</p>`}
${ctx.label === undefined ? '' : html`<p>${t.purpose(ctx.label)}</p>`}
<p>${t.text(ctx.maskedNumber)}</p>
<form method="post" action="${ctx.startPath}">
<input type="hidden" name="_csrf" value="${ctx.csrfToken}">
<input type="hidden" name="action" value="${ctx.scope}">
<input type="hidden" name="intent" value="${ctx.intentId}">
<button type="submit">${t.send}</button>
</form>`,
  });
}

export function stepUpConfirmPage(ctx: StepUpConfirmPage, nonce: string, messages: KitMessages): string {
  const t = messages.stepUp;
  const shownPath = maskNumbersInPath(ctx.path);
  // No action: the form posts to this page's own address, the path never repeated (it may hold a
  // phone number, and a full number appears only where the user typed it).
  return layout({
    title: t.confirmTitle,
    nonce,
    messages,
    body: html`<h1>${t.confirmTitle}</h1>
<p>${(ctx.verified ? t.confirmText : t.confirmPrompt)(ctx.label ?? shownPath)}</p>
<p><code>${ctx.method} ${shownPath}</code></p>
<form method="post">
<input type="hidden" name="_csrf" value="${ctx.csrfToken}">
<input type="hidden" name="${ctx.intentField}" value="${ctx.intentId}">
${ctx.methodOverride === undefined ? '' : html`<input type="hidden" name="_method" value="${ctx.methodOverride}">`}
<button type="submit">${t.confirm}</button>
</form>`,
  });
}

/**
 * A guarded page another site linked to, served at its own address: a link to that same address
 * opens it from this site, where the guard asks.
 */
export interface StepUpFromElsewherePage {
  label: string | undefined;
}

export function stepUpFromElsewherePage(ctx: StepUpFromElsewherePage, nonce: string, messages: KitMessages): string {
  const t = messages.stepUp;
  // An empty href is this page's own address, query included: its path, which may hold a phone
  // number, is not repeated in the page.
  return layout({
    title: t.title,
    nonce,
    messages,
    body: html`<h1>${t.title}</h1>
${ctx.label === undefined ? '' : html`<p>${t.purpose(ctx.label)}</p>`}
<p>${t.fromElsewhere}</p>
<p><a href="">${t.continue}</a></p>`,
  });
}

/** A user without a phone number: no verification can open the guarded route (no silent bypass). */
export function stepUpUnenrolledPage(nonce: string, messages: KitMessages): string {
  const t = messages.stepUp;
  return layout({
    title: t.unenrolledTitle,
    nonce,
    messages,
    body: html`<h1>${t.unenrolledTitle}</h1>
<p>${t.unenrolled}</p>`,
  });
}
