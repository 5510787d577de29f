/**
 * Page shells. Every interpolated value is escaped by the `html` tag; no inline script anywhere.
 */
import { html, SafeHtml } from 'hosted-sms-verify-kit';
import type { DemoActionName } from '../domain.ts';
import type { DemoTexts } from '../i18n.ts';
import { CSS } from './style.ts';

export { html, type SafeHtml };

export const BRAND = 'Payouts Demo';

export interface Viewer {
  name: string;
  /** Token for the demo's own forms (sign-out). */
  csrf: string;
  /** May use the operator page: its link is shown to operators alone. */
  operator: boolean;
}

export type NavItem = 'home' | 'activity' | 'verifications' | 'security' | 'operator';

function topbar(t: DemoTexts, viewer: Viewer | undefined, current: NavItem | undefined): SafeHtml {
  const link = (href: string, label: string, item: NavItem) =>
    html`<a href="${href}"${current === item ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<header class="topbar"><div class="topbar-inner">
<a class="brand" href="/"><span class="logo" aria-hidden="true">✓</span>${BRAND} <small>· ${t.brandTagline}</small></a>
${
  viewer === undefined
    ? html`<nav class="main" aria-label="${t.nav.label}"></nav>`
    : html`<nav class="main" aria-label="${t.nav.label}">
${link('/', t.nav.home, 'home')}${link('/activity', t.nav.activity, 'activity')}
${link('/verifications', t.nav.verifications, 'verifications')}${link('/security', t.nav.security, 'security')}
${viewer.operator ? link('/operator/pumping', t.nav.operator, 'operator') : ''}</nav>
<div class="who"><span><span class="sr-only">${t.signedInAs} </span><strong>${viewer.name}</strong></span>
<form method="post" action="/signout"><input type="hidden" name="_csrf" value="${viewer.csrf}">
<button class="btn secondary small" type="submit">${t.signOut}</button></form></div>`
}
</div></header>`;
}

function document(t: DemoTexts, title: string, head: SafeHtml, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="${t.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${BRAND}</title>
${head}
</head>
<body>
${body}
<footer>${t.footer}</footer>
</body>
</html>
`.value;
}

/** A demo page: stylesheet from /assets (allowed by helmet's default CSP). */
export function page(options: {
  t: DemoTexts;
  title: string;
  viewer?: Viewer;
  nav?: NavItem;
  narrow?: boolean;
  body: SafeHtml;
}): string {
  return document(
    options.t,
    options.title,
    html`<link rel="stylesheet" href="/assets/demo.css">`,
    html`${topbar(options.t, options.viewer, options.nav)}
<main${options.narrow === true ? html` class="narrow"` : ''}>
${options.body}
</main>`,
  );
}

/**
 * A page rendered by the kit (failure, pending, error...). The kit's CSP allows styles and scripts
 * only by nonce, so the stylesheet is inlined with it. The kit passes no request, so there is no user bar.
 */
export function kitPage(options: {
  t: DemoTexts;
  title: string;
  nonce: string;
  body: SafeHtml;
  script?: SafeHtml | string;
}): string {
  return document(
    options.t,
    options.title,
    html`<meta name="robots" content="noindex"><style nonce="${options.nonce}">${unsafeCss(CSS)}</style>`,
    html`${topbar(options.t, undefined, undefined)}
<main class="narrow">
${options.body}
</main>
${options.script ?? ''}`,
  );
}

/** The stylesheet is our own constant (no user input); it contains no "</style". */
function unsafeCss(css: string): SafeHtml {
  if (css.toLowerCase().includes('</style')) throw new Error('The stylesheet must not contain "</style".');
  return new SafeHtml(css);
}

export function initials(name: string): string {
  return name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((part) => part.charAt(0).toUpperCase())
    .join('');
}

export type { DemoTexts };

/** An action's or step-up scope's name in the page's language; its identifier for one the demo does not run. */
export function actionLabel(t: DemoTexts, action: string): string {
  return Object.hasOwn(t.actionLabels, action) ? t.actionLabels[action as DemoActionName] : action;
}

export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}
