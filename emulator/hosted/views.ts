/** HTML of the hosted verify page and its message pages. Inline CSS runs under a per-response CSP nonce. */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Shows the first digit after "+" and the last two digits only: +1••••••••67. */
export function maskPhone(e164: string): string {
  return `${e164.slice(0, 2)}${'•'.repeat(Math.max(0, e164.length - 4))}${e164.slice(-2)}`;
}

const STYLE = `
:root { color-scheme: light dark; --bg: #f3f5f9; --card: #fff; --text: #1b2330; --muted: #5a6575; --accent: #1f5eff;
  --accent-text: #fff; --error: #b3261e; --error-bg: #fdecea; --border: #c9d1dd; --focus: #1f5eff55; }
@media (prefers-color-scheme: dark) { :root { --bg: #10141b; --card: #1a202b; --text: #e8ecf3; --muted: #a3adbd;
  --accent: #6f9bff; --accent-text: #0b1020; --error: #ffb4ab; --error-bg: #3b1614; --border: #3a4455; --focus: #6f9bff66; } }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; padding: 16px; background: var(--bg); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { width: 100%; max-width: 400px; background: var(--card); border-radius: 16px; padding: 28px 24px;
  box-shadow: 0 4px 24px #0002; }
.brand { font-size: 13px; letter-spacing: .04em; text-transform: uppercase; color: var(--muted); margin: 0 0 12px; }
h1 { font-size: 22px; line-height: 1.3; margin: 0 0 8px; }
p { margin: 0 0 16px; color: var(--muted); }
.notice { border-left: 4px solid var(--accent); padding: 8px 12px; color: var(--text); background: var(--bg); border-radius: 4px; }
label { display: block; font-weight: 600; margin-bottom: 6px; }
input { width: 100%; font: 600 28px/1.2 ui-monospace, "SF Mono", Menlo, monospace; letter-spacing: .3em; text-align: center;
  padding: 12px; border: 2px solid var(--border); border-radius: 10px; background: var(--card); color: var(--text); }
input:focus { outline: 3px solid var(--focus); border-color: var(--accent); }
input[aria-invalid="true"] { border-color: var(--error); }
.error { color: var(--error); background: var(--error-bg); border-radius: 8px; padding: 10px 12px; font-weight: 600; }
.hint { font-size: 14px; margin: 8px 0 20px; }
button { width: 100%; min-height: 48px; font: 600 17px/1 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; border: 0; border-radius: 10px;
  background: var(--accent); color: var(--accent-text); cursor: pointer; }
button:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button.secondary { background: transparent; color: var(--accent); border: 2px solid var(--accent); margin-top: 12px; }
button:disabled { opacity: .6; cursor: progress; }
.error:empty { display: none; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

/** The page frame; `script` (the passkey pages' only script) runs under the same nonce as the styles. */
export function layout(title: string, nonce: string, body: string, script?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Hosted verification</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
<p class="brand">Hosted verification · local emulator</p>
${body}
</main>
${script === undefined ? '' : `<script nonce="${nonce}">${script}</script>\n`}</body>
</html>`;
}

export interface CodePageInput {
  nonce: string;
  maskedPhone: string;
  binding: string;
  attemptsLeft: number;
  sensitive: boolean;
  error?: string;
}

export function codePage(input: CodePageInput): string {
  const { nonce, maskedPhone, binding, attemptsLeft, sensitive, error } = input;
  const attempts = `${attemptsLeft} ${attemptsLeft === 1 ? 'attempt' : 'attempts'} left`;
  return layout(
    'Enter your code',
    nonce,
    `<h1>Enter the code we sent you</h1>
<p>We sent a 6-digit code by SMS to <strong>${escapeHtml(maskedPhone)}</strong>. It is valid for 10 minutes.</p>
${sensitive ? '<p class="notice">You are confirming a sensitive action. Only continue if you started it yourself.</p>' : ''}
${error ? `<p class="error" id="code-error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/verify/code">
<input type="hidden" name="page_binding" value="${escapeHtml(binding)}">
<label for="code">Verification code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="\\d{6}" maxlength="6"
  required autofocus aria-describedby="${error ? 'code-error ' : ''}code-hint"${error ? ' aria-invalid="true"' : ''}>
<p class="hint" id="code-hint">6 digits · ${attempts}</p>
<button type="submit">Verify</button>
</form>`,
  );
}

export function messagePage(nonce: string, title: string, message: string): string {
  return layout(title, nonce, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
