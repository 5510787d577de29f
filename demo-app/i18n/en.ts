/** The demo's own texts in English. */
import type { DemoTexts } from './texts.ts';

export const en: DemoTexts = {
  lang: 'en',
  brandTagline: 'hosted SMS verification',
  footer: 'A reference integrator for the hosted SMS verification kit. Demo data only.',
  nav: { label: 'Main', home: 'Home', activity: 'Activity', verifications: 'Verifications', security: 'Security' },
  signedInAs: 'Signed in as',
  signOut: 'Sign out',
  backHome: 'Back to home',
  signin: {
    title: 'Sign in',
    heading: 'Sign in to the demo',
    lead:
      'Pick a demo user. Each has a phone number on file; the SMS code goes to that number ' +
      "(read it from the emulator's inbox).",
    button: 'Sign in',
    buttonLabel: (name) => `Sign in as ${name}`,
    pickUser: 'Pick one of the demo users.',
    note:
      'Sign-in here is deliberately passwordless: the demo is about what happens after sign-in, when an action needs ' +
      'a fresh SMS verification.',
  },
  security: {
    title: 'Security',
    lead: 'This page shows your recovery codes, so it asks you to confirm it’s you by SMS at most every 10 minutes.',
    codes: 'Recovery codes',
    codesNote: 'Each code signs you in once if you lose your phone. Keep them somewhere safe.',
    replace: 'Replace the recovery codes',
    replaceHint: 'The old codes stop working. You confirm it’s you again before the new ones are made.',
    replaced: 'New recovery codes were made. The old ones no longer work.',
    seeLabel: 'see your recovery codes',
    replaceLabel: 'replace your recovery codes',
  },
  home: {
    title: 'Home',
    welcome: (first) => `Welcome back, ${first}`,
    lead:
      'Both actions below are confirmed with a one-time code sent by SMS to your phone, ' +
      "on the verification service's own page.",
    phone: 'Phone number',
    verified: '✓ Verified',
    notVerified: 'Not verified',
    confirmedAt: (when) => `Confirmed ${when}.`,
    confirmHint: 'Confirm you can receive texts at this number.',
    confirm: 'Confirm your phone number',
    confirmAgain: 'Confirm it again',
    payout: 'Payout account',
    sensitive: 'Sensitive',
    none: 'None yet',
    addHint: 'Add the account your payouts go to.',
    changedAt: (when) => `Changed ${when}.`,
    newAccount: 'New account number',
    accountHint: '8 to 17 digits. Applied only after you confirm with an SMS code.',
    accountExample: 'e.g. 0123 4567 8901',
    changePayout: 'Change payout account',
    codesGoTo: 'Codes go to',
    activityNote: 'With the bundled emulator, read them in its inbox. Your completed verifications are listed under',
  },
  activity: {
    title: 'Activity',
    lead:
      'Every action below ran exactly once, in the same database transaction that marked its verification session ' +
      'fulfilled.',
    empty: 'Nothing yet. Confirm your phone number or change your payout account from',
    emptyLink: 'Home',
    caption: 'Fulfilled actions, newest first',
    when: 'When',
    action: 'Action',
    details: 'Details',
    session: 'Verification session',
    emailsTitle: 'Emails sent',
    emailsLead:
      "Sent after each outcome by the kit's onOutcome hook, outside the transaction (at least once; one per outcome).",
    noEmails: 'No emails yet.',
  },
  actionLabels: { confirm_phone: 'Confirmed phone number', change_payout: 'Changed payout account' },
  verifications: {
    title: 'Verifications',
    lead:
      'Every verification you started, newest first, as the kit keeps it: the number is masked, and ' +
      'after 30 days the details of a finished verification are removed.',
    empty: 'No verifications yet.',
    started: 'Started',
    action: 'Action',
    outcome: 'Outcome',
    settledBy: 'Settled by',
    number: 'Number',
    removed: 'removed',
    outcomes: {
      pending: 'Waiting for the code',
      fulfilled: 'Verified and applied',
      failed: 'Not verified',
      expired: 'Expired',
      superseded: 'Replaced by a newer request',
    },
    sources: { landing: 'you came back to the site', mobile: 'the mobile app', sweep: 'the background check' },
    justNow: 'just now',
    minutesAgo: (n) => `${n} min ago`,
    hoursAgo: (n) => `${n} h ago`,
    daysAgo: (n) => `${n} days ago`,
  },
  verified: {
    phoneTitle: 'Phone number confirmed',
    phoneText: (phone) => `You confirmed that ${phone} is yours.`,
    phoneLanded: {
      first: 'Phone confirmed: this verification applied it just now.',
      replay: 'Phone confirmed: this verification had already been applied, so nothing ran twice.',
    },
    payoutTitle: 'Payout account changed',
    payoutText: (last4) => `Payouts now go to the account ending ${last4}.`,
    payoutUpdated: 'Your payout account was updated.',
    change: 'Change',
    when: 'When',
    session: 'Session',
    viewActivity: 'View activity',
  },
  errors: {
    signinRefused: {
      title: 'Sign-in refused',
      message: 'The sign-in form expired or came from another site. Open the sign-in page and try again.',
    },
    signoutRefused: { title: 'Sign-out refused', message: 'The form expired; go back and try again.' },
    notFound: { title: 'Page not found', message: 'There is nothing at this address.' },
    badRequest: { title: 'That request could not be read', message: 'Go back and try again.' },
    server: { title: 'Something went wrong', message: 'Nothing was changed. Please try again in a moment.' },
  },
  kit: {
    processedTitle: 'Verification processed',
    processedText: 'If you started this verification, sign in to the account you started it from to see the result.',
    goToSignIn: 'Go to sign in',
    errorTitle: 'Verification problem',
    clientErrorHeading: 'That did not work',
    serverErrorHeading: 'Something went wrong',
  },
  account: {
    missing: 'Enter the new account number.',
    tooLong: 'The account number is too long: use 8 to 17 digits.',
    digits: 'The account number must be 8 to 17 digits (spaces and hyphens are fine).',
    same: 'That is already your payout account.',
  },
};
