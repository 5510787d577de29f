/** GET /_dev/inbox: the SMS outbox as a page a person can read the code from (newest first, refreshes itself). */
import { randomBytes } from 'node:crypto';
import express from 'express';
import type { EmulatorContext } from './context.ts';
import { loopbackOnly } from './control.ts';
import { escapeHtml } from './views.ts';

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 720px; padding: 24px 16px; color-scheme: light dark; }
h1 { font-size: 22px; } table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 8px; border-bottom: 1px solid #8884; vertical-align: top; }
.code { font: 700 22px ui-monospace, Menlo, monospace; letter-spacing: .15em; }
.muted { color: #888; font-size: 13px; word-break: break-all; }
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
      'Content-Security-Policy': `default-src 'none'; style-src 'nonce-${nonce}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
      'Cache-Control': 'no-store',
    });
    res.type('html').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="3">
<title>SMS inbox · verification emulator</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<h1>SMS inbox</h1>
<p>Messages the emulator "sent", newest first. This page refreshes every 3 seconds.</p>
${rows ? `<table><thead><tr><th scope="col">To</th><th scope="col">Code</th><th scope="col">Sent / session</th></tr></thead><tbody>\n${rows}\n</tbody></table>` : '<p><em>No messages yet.</em></p>'}
</body>
</html>`);
  });
  return router;
}
