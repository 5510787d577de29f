/** The shape of the demo's own texts, one object per language, and the languages it has. */
export const DEMO_LOCALES = ['en', 'fr'] as const;
export type DemoLocale = (typeof DEMO_LOCALES)[number];

export interface DemoTexts {
  lang: DemoLocale;
  brandTagline: string;
  footer: string;
  nav: { label: string; home: string; activity: string; verifications: string; security: string };
  signedInAs: string;
  signOut: string;
  backHome: string;
  signin: {
    title: string;
    heading: string;
    lead: string;
    button: string;
    buttonLabel: (name: string) => string;
    pickUser: string;
    note: string;
  };
  /** The Security page: behind a step-up guard (10 minutes), with a form behind another. */
  security: {
    title: string;
    lead: string;
    codes: string;
    codesNote: string;
    replace: string;
    replaceHint: string;
    replaced: string;
    /** What the kit's "Confirm it's you" page says each guarded route does. */
    seeLabel: string;
    replaceLabel: string;
  };
  home: {
    title: string;
    welcome: (firstName: string) => string;
    lead: string;
    phone: string;
    verified: string;
    notVerified: string;
    confirmedAt: (when: string) => string;
    confirmHint: string;
    confirm: string;
    confirmAgain: string;
    payout: string;
    sensitive: string;
    none: string;
    addHint: string;
    changedAt: (when: string) => string;
    newAccount: string;
    accountHint: string;
    accountExample: string;
    changePayout: string;
    newPhone: string;
    phoneHint: string;
    phoneExample: string;
    changePhone: string;
    codesGoTo: string;
    activityNote: string;
  };
  activity: {
    title: string;
    lead: string;
    empty: string;
    emptyLink: string;
    caption: string;
    when: string;
    action: string;
    details: string;
    session: string;
    emailsTitle: string;
    emailsLead: string;
    noEmails: string;
  };
  actionLabels: Record<string, string>;
  verifications: {
    title: string;
    lead: string;
    empty: string;
    started: string;
    action: string;
    outcome: string;
    settledBy: string;
    number: string;
    removed: string;
    outcomes: Record<'pending' | 'fulfilled' | 'failed' | 'expired' | 'superseded', string>;
    sources: Record<string, string>;
    justNow: string;
    minutesAgo: (n: number) => string;
    hoursAgo: (n: number) => string;
    daysAgo: (n: number) => string;
  };
  verified: {
    phoneTitle: string;
    phoneText: (phone: string) => string;
    /** What the landing just did, read once from the kit (kit.attempts.takeLanded). */
    phoneLanded: { first: string; replay: string };
    payoutTitle: string;
    payoutText: (last4: string) => string;
    payoutUpdated: string;
    change: string;
    when: string;
    session: string;
    viewActivity: string;
  };
  errors: {
    signinRefused: { title: string; message: string };
    signoutRefused: { title: string; message: string };
    notFound: { title: string; message: string };
    badRequest: { title: string; message: string };
    server: { title: string; message: string };
  };
  kit: {
    processedTitle: string;
    processedText: string;
    goToSignIn: string;
    errorTitle: string;
    clientErrorHeading: string;
    serverErrorHeading: string;
  };
  /** Texts of the demo's `prepare` refusals (shown as written by the kit). */
  account: { missing: string; tooLong: string; digits: string; same: string };
}
