/**
 * HTML of the two passkey pages: "Use your passkey" (a later session of a userRef with a passkey) and
 * the enrolment offer after an accepted SMS code. Their small inline script runs the WebAuthn call and
 * posts the answer as JSON in a form field: no fetch, so the CSP keeps `default-src 'none'`.
 * Without JavaScript or WebAuthn the passkey button stays hidden and the SMS path still works.
 */
import { escapeHtml, layout } from '../hosted/views.ts';

// Browser side of WebAuthn: base64url <-> bytes around navigator.credentials.create/get.
const PASSKEY_SCRIPT = `
(() => {
  const form = document.getElementById('passkey-form');
  if (!form || !window.PublicKeyCredential || !navigator.credentials) return;
  const button = document.getElementById('passkey-button');
  const status = document.getElementById('passkey-status');
  const options = JSON.parse(form.dataset.options);
  const enrol = form.dataset.mode === 'enrol';
  const bytes = (text) => {
    const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
    return Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
  };
  const text = (buffer) => {
    let binary = '';
    for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '');
  };
  const withIds = (list) => (list || []).map((entry) => ({ ...entry, id: bytes(entry.id) }));
  const common = (credential) => ({ id: credential.id, rawId: text(credential.rawId), type: credential.type,
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: credential.authenticatorAttachment || undefined });
  async function ceremony() {
    if (enrol) {
      const created = await navigator.credentials.create({ publicKey: { ...options,
        challenge: bytes(options.challenge), user: { ...options.user, id: bytes(options.user.id) },
        excludeCredentials: withIds(options.excludeCredentials) } });
      const r = created.response;
      return { ...common(created), response: { clientDataJSON: text(r.clientDataJSON),
        attestationObject: text(r.attestationObject), transports: r.getTransports ? r.getTransports() : [] } };
    }
    const got = await navigator.credentials.get({ publicKey: { ...options, challenge: bytes(options.challenge),
      allowCredentials: withIds(options.allowCredentials) } });
    const r = got.response;
    return { ...common(got), response: { clientDataJSON: text(r.clientDataJSON),
      authenticatorData: text(r.authenticatorData), signature: text(r.signature),
      userHandle: r.userHandle ? text(r.userHandle) : undefined } };
  }
  button.hidden = false;
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = '';
    try {
      form.elements.credential.value = JSON.stringify(await ceremony());
      form.submit();
    } catch (error) {
      button.disabled = false;
      status.textContent = enrol && error && error.name === 'InvalidStateError'
        ? 'This device already has a passkey for you. Continue to the site.'
        : 'The passkey was not used. Try again, or ' + (enrol ? 'continue without one.' : 'get a code by SMS.');
    }
  });
})();
`;

const SENSITIVE_NOTICE =
  '<p class="notice">You are confirming a sensitive action. Only continue if you started it yourself.</p>';

interface PasskeyFormInput {
  mode: 'enrol' | 'verify';
  action: string;
  options: object;
  binding: string;
  label: string;
}

function passkeyForm({ mode, action, options, binding, label }: PasskeyFormInput): string {
  const data = `data-mode="${mode}" data-options="${escapeHtml(JSON.stringify(options))}"`;
  return `<form id="passkey-form" method="post" action="${action}" ${data}>
<input type="hidden" name="page_binding" value="${escapeHtml(binding)}">
<input type="hidden" name="credential" value="">
<button type="button" id="passkey-button" hidden>${escapeHtml(label)}</button>
</form>
<p class="error" id="passkey-status" role="alert"></p>`;
}

function errorLine(error: string | undefined): string {
  return error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
}

export interface PasskeyPageInput {
  nonce: string;
  binding: string;
  options: object;
  maskedPhone: string;
  /** The SMS already went out (the user asked before, or the session was created before enrolment). */
  smsSent: boolean;
  sensitive: boolean;
  error?: string;
}

/** A session whose userRef has a passkey: use it, or ask for the SMS code. */
export function passkeyPage(input: PasskeyPageInput): string {
  const { nonce, binding, options, maskedPhone, smsSent, sensitive, error } = input;
  const smsButton = smsSent ? 'Enter the SMS code instead' : 'Text me a code instead';
  const phone = escapeHtml(maskedPhone);
  return layout(
    'Use your passkey',
    nonce,
    `<h1>Verify it’s you</h1>
<p>Use the passkey you saved on this device. No SMS needed.</p>
${sensitive ? SENSITIVE_NOTICE : ''}
${errorLine(error)}
${passkeyForm({ mode: 'verify', action: '/verify/passkey', options, binding, label: 'Use your passkey' })}
<form method="post" action="/verify/sms">
<input type="hidden" name="page_binding" value="${escapeHtml(binding)}">
<button type="submit" class="secondary" aria-describedby="sms-hint">${smsButton}</button>
<p class="hint" id="sms-hint">${smsSent ? 'We sent' : 'We will send'} a 6-digit code to <strong>${phone}</strong>.</p>
</form>`,
    PASSKEY_SCRIPT,
  );
}

export interface EnrolPageInput {
  nonce: string;
  binding: string;
  options: object;
  error?: string;
}

/** After an accepted SMS code (the session is already `verified`): save a passkey, or continue. */
export function enrolPage({ nonce, binding, options, error }: EnrolPageInput): string {
  return layout(
    'Code accepted',
    nonce,
    `<h1>Code accepted</h1>
<p data-passkey-offer>Skip the SMS next time: save a passkey on this device and verify with your fingerprint, face or
screen lock instead of a code.</p>
${errorLine(error)}
${passkeyForm({ mode: 'enrol', action: '/verify/passkey/enrol', options, binding, label: 'Create a passkey' })}
<form method="post" action="/verify/continue">
<input type="hidden" name="page_binding" value="${escapeHtml(binding)}">
<button type="submit" class="secondary">Not now</button>
</form>`,
    PASSKEY_SCRIPT,
  );
}
