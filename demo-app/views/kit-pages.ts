/**
 * The kit's pages (failure, still confirming, start again, complete, error) in the demo's look.
 * The kit renders them on its routes with their own strict CSP and a per-response nonce; these
 * functions only produce the HTML. The auto-submit page is the kit's own and is not overridden.
 */
import type { PageRenderers, RestartForm } from 'hosted-sms-verify-kit';
import { html, kitPage, type SafeHtml } from './layout.ts';

const HOME = html`<a class="btn secondary" href="/">Back to home</a>`;

function restartButton(form: RestartForm | undefined): SafeHtml | string {
  if (form === undefined) return '';
  return html`<form method="post" action="${form.startPath}">
<input type="hidden" name="_csrf" value="${form.csrfToken}">
<input type="hidden" name="action" value="${form.actionName}">
${form.restartState === undefined ? '' : html`<input type="hidden" name="restart" value="${form.restartState}">`}
<button class="btn" type="submit">Start a new verification</button>
</form>`;
}

export const FAILURE_COPY: Record<string, { title: string; text: string }> = {
  otp_locked: {
    title: 'Too many incorrect codes',
    text: 'The code was entered incorrectly too many times, so this verification was locked. Nothing was changed. You can start a new verification with a new code.',
  },
  device_changed: {
    title: 'Verification moved to another device',
    text: 'The verification was continued on a different device or browser than the one it started on, so it was stopped for your safety. Nothing was changed; start again on this device.',
  },
  session_binding_failed: {
    title: 'Verification could not be tied to this browser',
    text: 'The verification page could not confirm it was opened from this browser (for example, from a copied link). Nothing was changed; start again from this site.',
  },
};

FAILURE_COPY.expired = {
  title: 'This verification expired',
  text: 'The verification was not finished in time, so nothing was changed. You can start a new one.',
};

FAILURE_COPY.superseded = {
  title: 'A newer request replaced this one',
  text:
    'You confirmed a newer request of the same kind, and that one was applied. ' +
    'This older request will never be applied.',
};

const GENERIC_FAILURE = {
  title: 'Verification failed',
  text: 'The verification did not succeed, so nothing was changed. You can start a new one.',
};

export const demoKitPages: PageRenderers = {
  complete(_ctx, nonce) {
    return kitPage({
      title: 'Verification processed',
      nonce,
      body: html`<section class="card result ok"><div class="icon" aria-hidden="true">✓</div>
<h1>Verification processed</h1>
<p>If you started this verification, sign in to the account you started it from to see the result.</p>
<div class="actions"><a class="btn" href="/">Go to sign in</a></div></section>`,
    });
  },
  failed(ctx, nonce) {
    const copy = Object.hasOwn(FAILURE_COPY, ctx.reason) ? FAILURE_COPY[ctx.reason]! : GENERIC_FAILURE;
    return kitPage({
      title: copy.title,
      nonce,
      body: html`<section class="card result bad" data-reason="${ctx.reason}"><div class="icon" aria-hidden="true">✕</div>
<h1>${copy.title}</h1>
<p>${copy.text}</p>
<div class="actions">${restartButton(ctx.restart)}${HOME}</div></section>`,
    });
  },
  pending(ctx, nonce) {
    const stillChecking = ctx.refreshSeconds !== null;
    return kitPage({
      title: 'Still confirming',
      nonce,
      refreshSeconds: ctx.refreshSeconds,
      body: html`<section class="card result wait"><div class="icon" aria-hidden="true">…</div>
<h1>Still confirming your verification</h1>
<p>${
        stillChecking
          ? 'The verification service has not confirmed the result yet. This page checks again every few seconds; please keep it open.'
          : 'The verification service has not confirmed the result yet. You do not need to wait: if you entered the code, the change is applied in the background within a few minutes and appears under Activity.'
      }</p>
<div class="actions">${HOME}</div></section>`,
    });
  },
  startAgain(ctx, nonce) {
    return kitPage({
      title: 'Start the verification again',
      nonce,
      body: html`<section class="card result wait"><div class="icon" aria-hidden="true">↻</div>
<h1>This verification page was already used</h1>
<p>For your security, a verification page opens only once. Start a new verification to continue.</p>
<div class="actions">${restartButton(ctx.restart)}${HOME}</div></section>`,
    });
  },
  error(ctx, nonce) {
    return kitPage({
      title: 'Verification problem',
      nonce,
      body: html`<section class="card result bad" data-code="${ctx.code}"><div class="icon" aria-hidden="true">!</div>
<h1>${ctx.status < 500 ? 'That did not work' : 'Something went wrong'}</h1>
<p>${ctx.message}</p>
<div class="actions">${HOME}</div></section>`,
    });
  },
};
