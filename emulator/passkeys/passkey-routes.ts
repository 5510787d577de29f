/**
 * The passkey forms of the hosted page. POST /verify/passkey ends a pending session `verified` with
 * a passkey of its client and userRef (no SMS); POST /verify/passkey/enrol saves a passkey after an
 * accepted SMS code. Both pass the same device and binding checks as the code form, and each answers
 * the one single-use challenge the page it came from was issued.
 */
import express, { type Request, type Response } from 'express';
import type { EmulatorContext } from '../context.ts';
import { forwardingRejections } from '../errors.ts';
import {
  endedForm,
  FORM_TYPE,
  pendingForm,
  returnToSite,
  sendEnrolPage,
  sendPage,
  sendPasskeyPage,
} from '../hosted/hosted-responses.ts';
import { parseCredential, verifyAssertion, verifyEnrolment } from './passkeys.ts';

// A WebAuthn answer as JSON is a few kB (RSA keys and attestation make it larger than a code form).
const passkeyBody = express.urlencoded({ extended: false, limit: '32kb', type: FORM_TYPE, parameterLimit: 20 });

export function passkeyRoutes(router: express.Router, context: EmulatorContext): void {
  router.post(
    '/passkey',
    passkeyBody,
    forwardingRejections((req, res) => verifyWithPasskey(context, req, res)),
  );
  router.post(
    '/passkey/enrol',
    passkeyBody,
    forwardingRejections((req, res) => enrolPasskey(context, req, res)),
  );
}

/** POST /verify/passkey: a passkey of this client and userRef ends the pending session verified. */
async function verifyWithPasskey(context: EmulatorContext, req: Request, res: Response): Promise<void> {
  const checked = pendingForm(req, res, context);
  if (checked === undefined) return;
  const { session, deviceId } = checked;
  const rp = context.relyingParty;
  const passkeys = context.passkeys.list(session.clientId, session.userRef);
  if (rp === undefined || passkeys.length === 0) {
    // This session's userRef has no passkey (another userRef's never counts): nothing changes.
    sendPage(res, 400, 'No passkey for this verification', 'Go back to the verification page and use the SMS code.');
    return;
  }
  const challenge = context.sessions.takeChallenge(session, 'verify');
  const credential = parseCredential(req.body?.credential);
  const answered = challenge !== undefined && credential !== undefined;
  const verified = answered && (await verifyAssertion(rp, credential, challenge, passkeys));
  if (!verified) {
    const error =
      challenge === undefined
        ? 'That passkey request has expired or was already used. Try again.'
        : 'That passkey could not be verified. Try again, or get a code by SMS.';
    await sendPasskeyPage(res, context, session, deviceId, { status: 400, error });
    return;
  }
  context.sessions.end(session, 'verified', undefined, 'passkey');
  returnToSite(res, session);
}

/** POST /verify/passkey/enrol: right after an accepted SMS code, saves the browser's new passkey. */
async function enrolPasskey(context: EmulatorContext, req: Request, res: Response): Promise<void> {
  const checked = endedForm(req, res, context);
  if (checked === undefined) return;
  const { session, deviceId } = checked;
  const rp = context.relyingParty;
  // Only right after an accepted SMS code, in the browser that entered it.
  if (rp === undefined || session.status !== 'verified' || session.verifiedBy !== 'sms') {
    sendPage(res, 400, 'No passkey can be saved here', 'Go back to the site.');
    return;
  }
  const challenge = context.sessions.takeChallenge(session, 'enrol');
  const credential = parseCredential(req.body?.credential);
  const owner = { clientId: session.clientId, userRef: session.userRef };
  const answered = challenge !== undefined && credential !== undefined;
  const passkey = answered ? await verifyEnrolment(rp, credential, challenge, owner) : undefined;
  if (passkey === undefined) {
    const error = 'The passkey could not be saved. Try again, or continue without one.';
    await sendEnrolPage(res, context, session, deviceId, { status: 400, error });
    return;
  }
  context.passkeys.add(passkey);
  returnToSite(res, session);
}
