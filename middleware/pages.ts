/**
 * The kit's default HTML pages and the headers every kit page carries.
 *
 * Every value is escaped (see html.ts). The only script is the auto-submit page's, allowed by a
 * per-response nonce in that page's own Content-Security-Policy. Every page is `no-store` and
 * `no-referrer`, so neither a handoff nor a return URL's query is kept in a cache or leaked in a
 * Referer. Integrators may override any page but the auto-submit one (`pages` option).
 */
import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import { html, scriptJson, type SafeHtml } from './html.ts';
import { KNOWN_FAILURE_REASONS } from './types.ts';

/** A POST form back to the start route: a new session and a new state. */
export interface RestartForm {
  /** The start route's path. */
  startPath: string;
  csrfToken: string;
  actionName: string;
  /** The finished attempt whose server-side parameters the new attempt reuses. */
  restartState?: string;
}

export interface FailedPage {
  /**
   * The service's reason (unknown values are a generic failure), 'expired' for an attempt the kit
   * expired, or 'superseded' for one never applied because a newer one of the same action was.
   */
  reason: string;
  restart: RestartForm | undefined;
}

export interface PendingPage {
  /** Seconds until this page reloads itself, or null when the kit stopped re-checking. */
  refreshSeconds: number | null;
}

export interface StartAgainPage {
  restart: RestartForm | undefined;
}

export interface ErrorPage {
  status: number;
  code: string;
  /** Safe for users: never carries a secret, a handoff or a service response body. */
  message: string;
}

/** Default renderers; each returns a whole HTML document. Values must be escaped by the renderer. */
export interface PageRenderers {
  /** Shown to anyone but the attempt's user, whatever the outcome: no details. */
  complete(ctx: Record<string, never>, nonce: string): string;
  failed(ctx: FailedPage, nonce: string): string;
  pending(ctx: PendingPage, nonce: string): string;
  startAgain(ctx: StartAgainPage, nonce: string): string;
  error(ctx: ErrorPage, nonce: string): string;
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a}
button{font:inherit;padding:.5rem 1.25rem;cursor:pointer}h1{font-size:1.4rem}`;

export function layout(page: {
  title: string;
  body: SafeHtml;
  nonce: string;
  refreshSeconds?: number | null;
  script?: SafeHtml;
}): string {
  const refresh =
    page.refreshSeconds === undefined || page.refreshSeconds === null
      ? ''
      : html`<meta http-equiv="refresh" content="${String(page.refreshSeconds)}">`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${refresh}
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

function restartForm(form: RestartForm | undefined, label: string): SafeHtml | string {
  if (form === undefined) return '';
  return html`<form method="post" action="${form.startPath}">
<input type="hidden" name="_csrf" value="${form.csrfToken}">
<input type="hidden" name="action" value="${form.actionName}">
${form.restartState === undefined ? '' : html`<input type="hidden" name="restart" value="${form.restartState}">`}
<button type="submit">${label}</button>
</form>`;
}

const FAILURE_TEXT: Record<(typeof KNOWN_FAILURE_REASONS)[number], { title: string; text: string }> = {
  otp_locked: {
    title: 'Too many incorrect codes',
    text: 'The code was entered incorrectly too many times, so this verification was locked. You can start a new one.',
  },
  device_changed: {
    title: 'Verification moved to another device',
    text: 'The verification was continued on a different device or browser than the one it started on, so it was stopped for your safety. Start again on this device.',
  },
  session_binding_failed: {
    title: 'Verification could not be tied to this browser',
    text: 'The verification page could not confirm it was opened from this browser (for example it was opened from a copied link). Start again from this page.',
  },
};

export const defaultPages: PageRenderers = {
  complete(_ctx, nonce) {
    return layout({
      title: 'Verification complete',
      nonce,
      body: html`<h1>Verification complete</h1>
<p>This verification has been processed. If you started it, sign in to the account you started it from to see the result.</p>`,
    });
  },
  failed(ctx, nonce) {
    const known = (KNOWN_FAILURE_REASONS as readonly string[]).includes(ctx.reason)
      ? FAILURE_TEXT[ctx.reason as keyof typeof FAILURE_TEXT]
      : ctx.reason === 'expired'
        ? { title: 'Verification expired', text: 'This verification was not completed in time. You can start a new one.' }
        : ctx.reason === 'superseded'
          ? {
              title: 'A newer request replaced this one',
              text:
                'You confirmed a newer request of the same kind, and that one was applied. ' +
                'This older request will never be applied.',
            }
          : { title: 'Verification failed', text: 'The verification did not succeed. You can start a new one.' };
    return layout({
      title: known.title,
      nonce,
      body: html`<h1>${known.title}</h1>
<p>${known.text}</p>
<p>Nothing was changed.</p>
${restartForm(ctx.restart, 'Start a new verification')}`,
    });
  },
  pending(ctx, nonce) {
    if (ctx.refreshSeconds === null) {
      return layout({
        title: 'Still confirming',
        nonce,
        body: html`<h1>Still confirming your verification</h1>
<p>The verification service has not confirmed the result yet. You do not need to wait here: if you completed the verification, it will be finished in the background within a few minutes and you will see the result in your account.</p>`,
      });
    }
    return layout({
      title: 'Confirming your verification',
      nonce,
      refreshSeconds: ctx.refreshSeconds,
      body: html`<h1>Confirming your verification…</h1>
<p>This page checks again automatically every few seconds. Please keep it open.</p>`,
    });
  },
  startAgain(ctx, nonce) {
    return layout({
      title: 'Start the verification again',
      nonce,
      body: html`<h1>This verification page was already used</h1>
<p>For your security a verification page is opened only once. Start a new verification to continue.</p>
${restartForm(ctx.restart, 'Start a new verification')}`,
    });
  },
  error(ctx, nonce) {
    return layout({
      title: 'Verification problem',
      nonce,
      body: html`<h1>Something went wrong with the verification</h1>
<p>${ctx.message}</p>`,
    });
  },
};

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** Headers every kit response carrying a flow value or a result gets. */
export function setNoStoreHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/** Sends one of the kit's pages with its own CSP (overriding helmet's) and no-store headers. */
export function sendPage(res: Response, status: number, body: string, nonce: string, formAction = "'self'"): void {
  setNoStoreHeaders(res);
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.status(status).type('html').send(body);
}

export interface HandoffPage {
  verifyUrl: string;
  handoff: string;
  /** Server-side path shown instead of re-sending a used or restored form. */
  startAgainUrl: string;
}

/**
 * The auto-submit page. It POSTs `hx` to verifyUrl exactly as returned, then blanks the field. If
 * the page is ever shown again (back/forward cache, or a restored copy whose sessionStorage flag
 * says it was already submitted) it never re-sends the handoff: it goes to the start-again page.
 * Not overridable: its script and headers are the security boundary.
 */
export function handoffPage(ctx: HandoffPage, nonce: string): string {
  const flagKey = `verify-kit-handoff-${nonce}`;
  const script = html`<script nonce="${nonce}">
(function () {
  var form = document.getElementById('verify-kit-handoff');
  var again = ${scriptJson(ctx.startAgainUrl)};
  var key = ${scriptJson(flagKey)};
  function blank() { var f = form.elements.namedItem('hx'); if (f) f.value = ''; }
  function leave() { blank(); window.location.replace(again); }
  var used = false;
  try { used = window.sessionStorage.getItem(key) === '1'; } catch (e) {}
  if (used) { leave(); return; }
  window.addEventListener('pageshow', function (event) { if (event.persisted) leave(); });
  form.addEventListener('submit', function () {
    try { window.sessionStorage.setItem(key, '1'); } catch (e) {}
    setTimeout(blank, 0);
  });
  try { window.sessionStorage.setItem(key, '1'); } catch (e) {}
  form.submit();
  setTimeout(blank, 0);
})();
</script>`;
  return layout({
    title: 'Continue to verification',
    nonce,
    script,
    body: html`<h1>Continue to verification</h1>
<p>You are being taken to the verification page. If nothing happens, press Continue.</p>
<form id="verify-kit-handoff" method="post" action="${ctx.verifyUrl}">
<input type="hidden" name="hx" value="${ctx.handoff}">
<button type="submit">Continue</button>
</form>`,
  });
}
