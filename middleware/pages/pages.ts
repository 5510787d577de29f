/**
 * The kit's default HTML pages (and the restart form they offer).
 *
 * Every value is escaped (see html.ts); every text comes from the request's messages (messages.ts)
 * and sets `<html lang>`. The only scripts are the auto-submit page's and the pending page's
 * re-check, each allowed by a per-response nonce in the page's own Content-Security-Policy. Every
 * page is `no-store` and `no-referrer`, so neither a handoff nor a return URL's query is kept in a
 * cache or leaked in a Referer. Integrators may override any page but the auto-submit one (`pages`).
 */
import { html, scriptJson, type SafeHtml } from './html.ts';
import { failureText, type ErrorTextKey, type KitMessages } from './messages.ts';

/** A POST form back to the start route: a new session and a new state. */
export interface RestartForm {
  /** The start route's path. */
  startPath: string;
  csrfToken: string;
  actionName: string;
  /** The finished attempt whose server-side parameters (and typed number) the new attempt reuses. */
  restartState?: string;
  /**
   * For an action that texts a typed number: that number, masked ("•• 78"). The restart texts the
   * number kept with the finished attempt, on the server: the form carries none.
   */
  maskedNumber?: string;
}

/** What the failure page shows. */
export interface FailedPage {
  /**
   * The service's reason (unknown values are a generic failure), 'expired' for an attempt the kit
   * expired, or 'superseded' for one never applied because a newer one of the same action was. A
   * service reason spelled 'expired' or 'superseded' arrives as 'generic'.
   */
  reason: string;
  restart: RestartForm | undefined;
}

/** What the "still confirming" page shows. */
export interface PendingPage {
  /**
   * Seconds before the page's first check by itself (each later wait half as long again, up to ten
   * times this), or null when the kit stopped checking (the sweep finishes).
   */
  refreshSeconds: number | null;
  /** How much longer the page may keep checking by itself, in seconds (null when it stopped). */
  refreshForSeconds: number | null;
  /** The landing's own path with the validated session_id and state: the "Check again" target. */
  checkAgainUrl: string;
  /**
   * The page's re-check script (with this response's nonce), or '' once the kit stopped checking:
   * put it at the end of `<body>`, with a `role="status"` element whose id is PENDING_STATUS_ID.
   */
  script: SafeHtml | string;
}

/** What the start-again page shows. */
export interface StartAgainPage {
  restart: RestartForm | undefined;
}

/**
 * The kit's form for an action that texts a typed number, shown again when the number cannot be
 * texted (422): the start route's POST with the typed value kept, so the user corrects it.
 */
export interface EnterNumberPage {
  form: RestartForm;
  /** What the user typed: shown back only in this form's own field. */
  entered: string;
  /** Why it was refused, in the request's language (never which rule). */
  message: string;
}

/** The name of the start request's field holding a typed number (form field and mobile JSON). */
export const ENTERED_NUMBER_FIELD = 'phone';

/** What the error page shows. */
export interface ErrorPage {
  status: number;
  code: string;
  /** In the request's language; never carries a secret, a handoff or a service response body. */
  message: string;
  /** The `messages.errors` key of `message` when not the code's own (`step_up_intent_other_resource`). */
  text?: ErrorTextKey;
}

/**
 * Default renderers; each returns a whole HTML document. Values must be escaped by the renderer.
 * `messages` are the texts in the request's language (see messages.ts); set `<html lang>` from them.
 */
export interface PageRenderers {
  /** Shown to anyone but the attempt's user, whatever the outcome: no details. */
  complete(ctx: Record<string, never>, nonce: string, messages: KitMessages): string;
  failed(ctx: FailedPage, nonce: string, messages: KitMessages): string;
  pending(ctx: PendingPage, nonce: string, messages: KitMessages): string;
  startAgain(ctx: StartAgainPage, nonce: string, messages: KitMessages): string;
  enterNumber(ctx: EnterNumberPage, nonce: string, messages: KitMessages): string;
  error(ctx: ErrorPage, nonce: string, messages: KitMessages): string;
}

/** Colours meet WCAG AA contrast; focus is always visible. */
const STYLE = `body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5;
color:#1a1a1a;background:#fff}
button,.button{font:inherit;padding:.5rem 1.25rem;cursor:pointer;display:inline-block;color:#fff;background:#1d4ed8;
border:0;border-radius:.4rem;text-decoration:none}
:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}h1{font-size:1.4rem}`;

export function layout(page: {
  title: string;
  body: SafeHtml;
  nonce: string;
  messages: KitMessages;
  script?: SafeHtml | string;
}): string {
  return html`<!doctype html>
<html lang="${page.messages.lang}" dir="${page.messages.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${page.title}</title>
<style nonce="${page.nonce}">${STYLE}</style>
</head>
<body>
<main>
${page.body}
</main>
${page.script ?? ''}
</body>
</html>
`.value;
}

/** The "start a new verification" form for a custom page (empty when none can be offered). */
export function restartForm(form: RestartForm | undefined, label: string, buttonClass?: string): SafeHtml | string {
  if (form === undefined) return '';
  return html`<form method="post" action="${form.startPath}">
<input type="hidden" name="_csrf" value="${form.csrfToken}">
<input type="hidden" name="action" value="${form.actionName}">
${form.restartState === undefined ? '' : html`<input type="hidden" name="restart" value="${form.restartState}">`}
<button type="submit"${buttonClass === undefined ? '' : html` class="${buttonClass}"`}>${label}</button>
</form>`;
}

/** Response header the landing sets on a pending answer, so the page's script knows to keep waiting. */
export const PENDING_HEADER = 'X-Verify-Kit-Outcome';

/**
 * Request header (value `background`) of the pending page's own checks: the page is already the
 * loop that checks again, so such a request reads the status once instead of re-checking within
 * the request (`landing.pendingRechecks`), and a page left open does not multiply the reads.
 */
export const BACKGROUND_CHECK_HEADER = 'X-Verify-Kit-Check';

/** Each wait of the pending page's script is this much longer than the last, up to LONGEST_CHECK_WAIT times the first. */
const CHECK_WAIT_GROWTH = 1.5;
const LONGEST_CHECK_WAIT = 10;

/** The id of the pending page's status region; the checking script updates it. */
export const PENDING_STATUS_ID = 'verify-kit-status';

/**
 * The pending page's script: while the window lasts it re-requests the landing in the background
 * (no page reload, so nothing moves under a screen reader), first after `refreshSeconds`, then
 * less often (every status read costs the integrator; an outcome is most likely soon after the
 * return), and once the answer is no longer "pending" it loads the landing to show the result.
 * Only the page's own landing URL is ever requested or opened. Without JavaScript the "Check
 * again" link does the same.
 */
export function pendingScript(
  ctx: Omit<PendingPage, 'script'>,
  nonce: string,
  messages: KitMessages,
): SafeHtml | string {
  if (ctx.refreshSeconds === null || ctx.refreshForSeconds === null) return '';
  const t = messages.pending;
  return html`<script nonce="${nonce}">
(function () {
  var url = ${scriptJson(ctx.checkAgainUrl)};
  var everyMs = ${scriptJson(ctx.refreshSeconds * 1000)};
  var longestMs = everyMs * ${scriptJson(LONGEST_CHECK_WAIT)};
  var stopAt = Date.now() + ${scriptJson(ctx.refreshForSeconds * 1000)};
  var status = document.getElementById(${scriptJson(PENDING_STATUS_ID)});
  var texts = ${scriptJson({ checking: t.checking, ready: t.resultReady, stopped: t.stopped })};
  function say(text) { if (status) status.textContent = text; }
  function later() {
    setTimeout(check, everyMs);
    everyMs = Math.min(longestMs, Math.round(everyMs * ${scriptJson(CHECK_WAIT_GROWTH)}));
  }
  function check() {
    if (Date.now() >= stopAt) { say(texts.stopped); return; }
    var headers = {};
    headers[${scriptJson(BACKGROUND_CHECK_HEADER)}] = 'background';
    fetch(url, { credentials: 'same-origin', cache: 'no-store', redirect: 'manual', headers: headers })
      .then(function (response) {
        // A redirect (fulfilled) or another page (failed, neutral): show it. Still pending or a
        // passing error (the service unreachable): keep waiting.
        var pending = response.headers.get(${scriptJson(PENDING_HEADER)}) === 'pending';
        var settled = response.type === 'opaqueredirect' || (response.ok && !pending);
        if (!settled) {
          later();
          return;
        }
        say(texts.ready);
        window.location.replace(url);
      })
      .catch(later);
  }
  say(texts.checking);
  later();
})();
</script>`;
}

/** The kit's own pages; `pages` overrides any of them. */
export const defaultPages: PageRenderers = {
  complete(_ctx, nonce, messages) {
    const { title, text } = messages.complete;
    return layout({
      title,
      nonce,
      messages,
      body: html`<h1>${title}</h1>
<p>${text}</p>`,
    });
  },
  failed(ctx, nonce, messages) {
    const { title, text } = failureText(messages, ctx.reason);
    return layout({
      title,
      nonce,
      messages,
      body: html`<h1>${title}</h1>
<p>${text}</p>
<p>${messages.nothingChanged}</p>
${ctx.restart?.maskedNumber === undefined ? '' : html`<p>${messages.codeGoesTo(ctx.restart.maskedNumber)}</p>`}
${restartForm(ctx.restart, messages.startNew)}`,
    });
  },
  pending(ctx, nonce, messages) {
    const t = messages.pending;
    const checking = ctx.refreshSeconds !== null;
    return layout({
      title: checking ? t.title : t.stoppedTitle,
      nonce,
      messages,
      script: ctx.script,
      body: html`<h1>${checking ? t.title : t.stoppedTitle}</h1>
<p id="${PENDING_STATUS_ID}" role="status">${checking ? t.waiting : t.stopped}</p>
<p><a class="button" href="${ctx.checkAgainUrl}">${t.checkAgain}</a></p>`,
    });
  },
  startAgain(ctx, nonce, messages) {
    const t = messages.startAgain;
    return layout({
      title: t.title,
      nonce,
      messages,
      body: html`<h1>${t.heading}</h1>
<p>${t.text}</p>
${restartForm(ctx.restart, messages.startNew)}`,
    });
  },
  enterNumber(ctx, nonce, messages) {
    const t = messages.enterNumber;
    return layout({
      title: t.title,
      nonce,
      messages,
      body: html`<h1>${t.title}</h1>
<p id="verify-kit-number-error" role="alert">${ctx.message}</p>
<form method="post" action="${ctx.form.startPath}">
<input type="hidden" name="_csrf" value="${ctx.form.csrfToken}">
<input type="hidden" name="action" value="${ctx.form.actionName}">
<p><label for="verify-kit-number">${t.label}</label><br>
<input id="verify-kit-number" name="${ENTERED_NUMBER_FIELD}" type="tel" autocomplete="tel" value="${ctx.entered}"
 aria-invalid="true" aria-describedby="verify-kit-number-error verify-kit-number-hint"></p>
<p id="verify-kit-number-hint">${t.hint}</p>
<button type="submit">${t.send}</button>
</form>`,
    });
  },
  error(ctx, nonce, messages) {
    // A kept request replayed, expired or from another browser: nothing went wrong. One sent back
    // under another resource is still open for its own: confirmed there.
    const otherResource = ctx.text === 'step_up_intent_other_resource';
    const settled = ctx.code === 'step_up_intent_unusable' && !otherResource;
    const title = otherResource ? messages.stepUp.confirmTitle : settled ? messages.stepUp.unusableTitle : undefined;
    const heading = title ?? messages.error.heading;
    return layout({
      title: title ?? messages.error.title,
      nonce,
      messages,
      body: html`<h1>${heading}</h1>
<p>${ctx.message}</p>`,
    });
  },
};
