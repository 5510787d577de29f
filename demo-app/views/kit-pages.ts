/**
 * The kit's pages (failure, still confirming, start again, complete, the typed-number form, error) in the
 * demo's look.
 * The kit renders them on its routes with their own strict CSP and a per-response nonce; these
 * functions only produce the HTML. Texts come from the kit's messages for the request's language
 * (the demo passes its English and French sets as the kit's `messages` option, see i18n.ts) and
 * the demo's own texts of that language. The auto-submit page is the kit's own and is not overridden.
 */
import {
  ENTERED_NUMBER_FIELD,
  failureText,
  PENDING_STATUS_ID,
  type PageRenderers,
  type RestartForm,
} from 'hosted-sms-verify-kit';
import { textsFor } from '../i18n.ts';
import { html, kitPage, type DemoTexts, type SafeHtml } from './layout.ts';

function home(t: DemoTexts): SafeHtml {
  return html`<a class="btn secondary" href="/">${t.backHome}</a>`;
}

function restartButton(form: RestartForm | undefined, label: string): SafeHtml | string {
  if (form === undefined) return '';
  return html`<form method="post" action="${form.startPath}">
<input type="hidden" name="_csrf" value="${form.csrfToken}">
<input type="hidden" name="action" value="${form.actionName}">
${form.restartState === undefined ? '' : html`<input type="hidden" name="restart" value="${form.restartState}">`}
<button class="btn" type="submit">${label}</button>
</form>`;
}

export const demoKitPages: PageRenderers = {
  complete(_ctx, nonce, messages) {
    const t = textsFor(messages);
    return kitPage({
      t,
      title: t.kit.processedTitle,
      nonce,
      body: html`<section class="card result ok"><div class="icon" aria-hidden="true">✓</div>
<h1>${t.kit.processedTitle}</h1>
<p>${t.kit.processedText}</p>
<div class="actions"><a class="btn" href="/">${t.kit.goToSignIn}</a></div></section>`,
    });
  },
  failed(ctx, nonce, messages) {
    const t = textsFor(messages);
    const copy = failureText(messages, ctx.reason);
    return kitPage({
      t,
      title: copy.title,
      nonce,
      body: html`<section class="card result bad" data-reason="${ctx.reason}"><div class="icon" aria-hidden="true">✕</div>
<h1>${copy.title}</h1>
<p>${copy.text}</p>
${ctx.restart?.maskedNumber === undefined ? '' : html`<p>${messages.codeGoesTo(ctx.restart.maskedNumber)}</p>`}
<div class="actions">${restartButton(ctx.restart, messages.startNew)}${home(t)}</div></section>`,
    });
  },
  pending(ctx, nonce, messages) {
    const t = textsFor(messages);
    const p = messages.pending;
    const checking = ctx.refreshSeconds !== null;
    return kitPage({
      t,
      title: checking ? p.title : p.stoppedTitle,
      nonce,
      script: ctx.script,
      body: html`<section class="card result wait"><div class="icon" aria-hidden="true">…</div>
<h1>${checking ? p.title : p.stoppedTitle}</h1>
<p id="${PENDING_STATUS_ID}" role="status">${checking ? p.waiting : p.stopped}</p>
<div class="actions"><a class="btn" href="${ctx.checkAgainUrl}">${p.checkAgain}</a>${home(t)}</div></section>`,
    });
  },
  startAgain(ctx, nonce, messages) {
    const t = textsFor(messages);
    const s = messages.startAgain;
    return kitPage({
      t,
      title: s.title,
      nonce,
      body: html`<section class="card result wait"><div class="icon" aria-hidden="true">↻</div>
<h1>${s.heading}</h1>
<p>${s.text}</p>
<div class="actions">${restartButton(ctx.restart, messages.startNew)}${home(t)}</div></section>`,
    });
  },
  enterNumber(ctx, nonce, messages) {
    const t = textsFor(messages);
    const n = messages.enterNumber;
    return kitPage({
      t,
      title: n.title,
      nonce,
      body: html`<section class="card" aria-labelledby="number-title">
<h1 id="number-title">${n.title}</h1>
<p class="alert bad" id="number-error" role="alert">${ctx.message}</p>
<form method="post" action="${ctx.form.startPath}">
<input type="hidden" name="_csrf" value="${ctx.form.csrfToken}">
<input type="hidden" name="action" value="${ctx.form.actionName}">
<label for="phone">${n.label}</label>
<input type="tel" id="phone" name="${ENTERED_NUMBER_FIELD}" autocomplete="tel" required maxlength="40"
  value="${ctx.entered}" aria-invalid="true" aria-describedby="number-error number-hint">
<p class="hint" id="number-hint">${n.hint}</p>
<div class="actions"><button class="btn" type="submit">${n.send}</button>${home(t)}</div>
</form></section>`,
    });
  },
  error(ctx, nonce, messages) {
    const t = textsFor(messages);
    return kitPage({
      t,
      title: t.kit.errorTitle,
      nonce,
      body: html`<section class="card result bad" data-code="${ctx.code}"><div class="icon" aria-hidden="true">!</div>
<h1>${ctx.status < 500 ? t.kit.clientErrorHeading : t.kit.serverErrorHeading}</h1>
<p>${ctx.message}</p>
<div class="actions">${home(t)}</div></section>`,
    });
  },
};
