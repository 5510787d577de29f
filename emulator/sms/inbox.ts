/**
 * GET /_dev/inbox: the SMS outbox as a page a person can read the code from (newest first). A
 * small script refreshes the list in place every 3 s (no page reload, which would be an
 * accessibility failure, WCAG 2.2.1); without JavaScript the Refresh link does it.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import type { EmulatorContext } from '../context.ts';
import { loopbackOnly } from '../control/control.ts';
import { escapeHtml } from '../hosted/views.ts';

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 720px; padding: 24px 16px; color-scheme: light dark; }
h1 { font-size: 22px; } table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 8px; border-bottom: 1px solid #8884; vertical-align: top; }
.code { font: 700 22px ui-monospace, Menlo, monospace; letter-spacing: .15em; }
.muted { color: #595959; font-size: 13px; word-break: break-all; }
@media (prefers-color-scheme: dark) { .muted { color: #b0b0b0; } }
`;

export function inboxRouter(context: EmulatorContext): express.Router {
  const router = express.Router();
  router.get('/_dev/inbox', loopbackOnly, (_req, res) => {
    const nonce = randomBytes(16).toString('base64');
    const rows = [...context.outbox.list()]
      .reverse()
      .map(
        (message) =>
          `<tr><td>${escapeHtml(message.to)}</td><td class="code">${escapeHtml(message.code)}</td>` +
          `<td><time>${escapeHtml(message.sentAt)}</time><div class="muted">${escapeHtml(message.sessionId)}</div></td></tr>`,
      )
      .join('\n');
    res.set({
      'Content-Security-Policy':
        `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; ` +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      'Cache-Control': 'no-store',
    });
    res.type('html').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>SMS inbox · verification emulator</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
<h1>SMS inbox</h1>
<p>Messages the emulator "sent", newest first. The list updates by itself every 3 seconds.
<a href="/_dev/inbox">Refresh</a></p>
<div id="messages">
${rows ? `<table><thead><tr><th scope="col">To</th><th scope="col">Code</th><th scope="col">Sent / session</th></tr></thead><tbody>\n${rows}\n</tbody></table>` : '<p><em>No messages yet.</em></p>'}
</div>
</main>
<script nonce="${nonce}">
setInterval(function () {
  fetch('/_dev/inbox', { cache: 'no-store' }).then(function (r) { return r.text(); }).then(function (text) {
    var next = new DOMParser().parseFromString(text, 'text/html').getElementById('messages');
    var list = document.getElementById('messages');
    if (next && list && next.innerHTML !== list.innerHTML) list.innerHTML = next.innerHTML;
  }).catch(function () {});
}, 3000);
</script>
</body>
</html>`);
  });
  return router;
}
