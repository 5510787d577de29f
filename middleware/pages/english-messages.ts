/** The kit's English texts (messages.ts merges every locale over them). */
import type { KitMessages } from './message-types.ts';

const START_AGAIN = 'Start again from the page you came from.';
const SERVER_PROBLEM =
  'The verification could not be completed because of a problem on our side. ' +
  'Nothing was changed; please try again later.';

/** The kit's English texts, the defaults every locale is merged over. */
export const englishMessages: KitMessages = {
  lang: 'en',
  dir: 'ltr',
  startNew: 'Start a new verification',
  nothingChanged: 'Nothing was changed.',
  handoff: {
    title: 'Continue to verification',
    text: 'You are being taken to the verification page. If nothing happens, press Continue.',
    continue: 'Continue',
  },
  codeGoesTo: (maskedNumber) => `The code goes to the number ending ${maskedNumber}.`,
  enterNumber: {
    title: 'Enter your phone number',
    label: 'Phone number',
    hint: 'We will text a code to this number. Outside your own country, start with + and the country code.',
    send: 'Text me a code',
  },
  complete: {
    title: 'Verification complete',
    text:
      'This verification has been processed. If you started it, sign in to the account you started it from to see ' +
      'the result.',
  },
  failures: {
    otp_locked: {
      title: 'Too many incorrect codes',
      text: 'The code was entered incorrectly too many times, so this verification was locked. You can start a new one.',
    },
    device_changed: {
      title: 'Verification moved to another device',
      text:
        'The verification was continued on a different device or browser than the one it started on, so it was ' +
        'stopped for your safety. Start again on this device.',
    },
    session_binding_failed: {
      title: 'Verification could not be tied to this browser',
      text:
        'The verification page could not confirm it was opened from this browser (for example it was opened from a ' +
        'copied link). Start again from this page.',
    },
    expired: {
      title: 'Verification expired',
      text: 'This verification was not completed in time. You can start a new one.',
    },
    superseded: {
      title: 'A newer request replaced this one',
      text:
        'You confirmed a newer request of the same kind, and that one was applied. ' +
        'This older request will never be applied.',
    },
    generic: { title: 'Verification failed', text: 'The verification did not succeed. You can start a new one.' },
  },
  pending: {
    title: 'Confirming your verification',
    waiting:
      'Waiting for the verification service to confirm the result. Press Check again in a few seconds to see it.',
    checking:
      'Waiting for the verification service to confirm the result. This page checks again by itself every few ' +
      'seconds.',
    stoppedTitle: 'Still confirming your verification',
    stopped:
      'The verification service has not confirmed the result yet. You do not need to wait here: if you completed ' +
      'the verification, it will be finished in the background within a few minutes and you will see the result in ' +
      'your account.',
    resultReady: 'The result is in. Showing it now.',
    checkAgain: 'Check again',
  },
  startAgain: {
    title: 'Start the verification again',
    heading: 'This verification page was already used',
    text: 'For your security a verification page is opened only once. Start a new verification to continue.',
  },
  error: { title: 'Verification problem', heading: 'Something went wrong with the verification' },
  errors: {
    invalid_options: SERVER_PROBLEM,
    mounted_at_wrong_path: SERVER_PROBLEM,
    not_signed_in: 'Sign in to continue.',
    csrf_failed: 'The form has expired or was not sent from this site; reload the page and try again.',
    unknown_action: 'This verification request names no known action; go back and try again.',
    invalid_action_params: 'The form could not be accepted; go back, check it and try again.',
    invalid_phone_number:
      'This is not a phone number we can text. Check it; for a number of another country, start with + and its country code.',
    phone_number_refused: 'We cannot send a code to this number. Enter another mobile number.',
    stored_number_refused:
      'We cannot send a code to the phone number on your account. Change the number in your account, or contact support.',
    kept_number_refused: 'We cannot send a code to the number this verification used. Enter another mobile number.',
    rate_limited: 'Too many verification attempts.',
    invalid_return_params: `This verification link is incomplete or malformed. ${START_AGAIN}`,
    unknown_attempt: `No verification attempt matches this link. ${START_AGAIN}`,
    session_mismatch: `This link does not belong to the verification it names. ${START_AGAIN}`,
    service_response_mismatch: 'The verification could not be confirmed, so nothing was changed. Please start again.',
    service_unavailable: 'The verification service cannot be reached right now. Please try again in a moment.',
    service_busy: 'The verification service is busy right now. Nothing was sent or counted; please try again shortly.',
    service_rejected: SERVER_PROBLEM,
    service_protocol_error: SERVER_PROBLEM,
    fulfil_failed: SERVER_PROBLEM,
    hook_failed: SERVER_PROBLEM,
    step_up_intent_unusable:
      'This request was already carried out, has expired, or was started in another browser. Nothing was changed now.',
    step_up_intent_sent_elsewhere:
      'This request was already sent from another tab or window: continue there. Nothing was changed here.',
    step_up_intent_other_resource:
      'This request was made for another account or workspace than the one open now. Switch back to that one to confirm it. Nothing was changed.',
    step_up_upload_refused:
      'This form cannot be confirmed with a file attached. Send it without the file, or upload the file after confirming.',
    store_unavailable: 'This cannot be completed right now. Please try again in a moment.',
    method_not_allowed: 'Verification is started by submitting a form (POST), not by opening a link.',
    client_error: 'That request could not be accepted; go back and try again.',
    server_error: SERVER_PROBLEM,
  },
  retryAfter: (seconds) =>
    seconds < 90 ? `Try again in ${seconds} seconds.` : `Try again in ${Math.ceil(seconds / 60)} minutes.`,
  stepUp: {
    title: 'Confirm it’s you',
    text: (maskedNumber) =>
      `To continue, confirm it’s you with a code we text to your number ${maskedNumber}, or with your passkey if you set one up.`,
    purpose: (label) => `You asked to: ${label}.`,
    send: 'Text me a code',
    tooOld:
      'Your confirmation took longer than this page allows, so it cannot be used here. Confirm again to continue.',
    otherResource: 'Your confirmation was for something else, so it cannot be used here. Confirm again to continue.',
    confirmTitle: 'Confirm your request',
    confirmText: (label) => `You confirmed it’s you. Now confirm that you want to: ${label}.`,
    confirmPrompt: (label) => `Confirm that you want to: ${label}.`,
    confirm: 'Confirm',
    fromElsewhere: 'You came here from another site. Continue on this site to confirm it’s you.',
    continue: 'Continue',
    unenrolledTitle: 'A phone number is needed',
    unusableTitle: 'This request is no longer open',
    unenrolled:
      'This page needs a confirmation by text message, and your account has no phone number yet. Add one to your account, then try again.',
  },
};
