/**
 * Page shells. Every interpolated value is escaped by the `html` tag; no inline script anywhere.
 */
import { html, SafeHtml } from 'hosted-sms-verify-kit';
import { CSS } from './style.ts';

export { html, type SafeHtml };

export const BRAND = 'Payouts Demo';

export interface Viewer {
  name: string;
  /** Token for the demo's own forms (sign-out). */
  csrf: string;
}

export type NavItem = 'home' | 'activity' | 'verifications';

function topbar(viewer: Viewer | undefined, current: NavItem | undefined): SafeHtml {
  const link = (href: string, label: string, item: NavItem) =>
    html`<a href="${href}"${current === item ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<header class="topbar"><div class="topbar-inner">
<a class="brand" href="/"><span class="logo" aria-hidden="true">✓</span>${BRAND} <small>· hosted SMS verification</small></a>
${
  viewer === undefined
    ? html`<nav class="main" aria-label="Main"></nav>`
    : html`<nav class="main" aria-label="Main">${link('/', 'Home', 'home')}${link('/activity', 'Activity', 'activity')}${link('/verifications', 'Verifications', 'verifications')}</nav>
<div class="who"><span>Signed in as <strong>${viewer.name}</strong></span>
<form method="post" action="/signout"><input type="hidden" name="_csrf" value="${viewer.csrf}"><button class="btn secondary small" type="submit">Sign out</button></form></div>`
}
</div></header>`;
}

function document(title: string, head: SafeHtml, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${BRAND}</title>
${head}
</head>
<body>
${body}
<footer>A reference integrator for the hosted SMS verification kit. Demo data only.</footer>
</body>
</html>
`.value;
}

/** A demo page: stylesheet from /assets (allowed by helmet's default CSP). */
export function page(options: {
  title: string;
  viewer?: Viewer;
  nav?: NavItem;
  narrow?: boolean;
  body: SafeHtml;
}): string {
  return document(
    options.title,
    html`<link rel="stylesheet" href="/assets/demo.css">`,
    html`${topbar(options.viewer, options.nav)}
<main${options.narrow === true ? html` class="narrow"` : ''}>
${options.body}
</main>`,
  );
}

/**
 * A page rendered by the kit (failure, pending, error...). The kit's CSP allows styles only by
 * nonce, so the stylesheet is inlined with it. The kit passes no request, so there is no user bar.
 */
export function kitPage(options: { title: string; nonce: string; refreshSeconds?: number | null; body: SafeHtml }): string {
  const refresh =
    options.refreshSeconds === undefined || options.refreshSeconds === null
      ? ''
      : html`<meta http-equiv="refresh" content="${String(options.refreshSeconds)}">`;
  return document(
    options.title,
    html`<meta name="robots" content="noindex">${refresh}<style nonce="${options.nonce}">${unsafeCss(CSS)}</style>`,
    html`${topbar(undefined, undefined)}
<main class="narrow">
${options.body}
</main>`,
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
    .map((part) => part[0]!.toUpperCase())
    .join('');
}

export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}
