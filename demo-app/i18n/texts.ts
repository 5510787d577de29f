/** The shape of the demo's own texts, one object per language, and the languages it has. */
import type { DemoActionName } from '../domain.ts';

export const DEMO_LOCALES = ['en', 'fr'] as const;
export type DemoLocale = (typeof DEMO_LOCALES)[number];

export interface DemoTexts {
  lang: DemoLocale;
  brandTagline: string;
  footer: string;
  nav: { label: string; home: string; activity: string; verifications: string; security: string; operator: string };
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
    /** What the "Confirm it's you" page says before the phone number changes. */
    changePhoneLabel: string;
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
  /** Each action and step-up scope as Activity and Verifications name it. */
  actionLabels: Record<DemoActionName, string>;
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
    /** The user's current number has not been confirmed, or the confirmation just landed confirmed nothing. */
    phoneNotConfirmedTitle: string;
    phoneNotConfirmedText: (phone: string) => string;
    /**
     * What the landing just did, read once from the kit (kit.attempts.takeLanded); `notCurrent`: a
     * confirmation of a number that was no longer the user's, which changed nothing.
     */
    phoneLanded: { first: string; replay: string; notCurrent: string };
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
    /** A signed-in user who is not an operator, on the operator page or its form (403). */
    operatorOnly: { title: string; message: string };
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
  /** The operator page (SMS pumping): texts per country, what trips now, the decisions, a block or release. */
  operator: OperatorTexts;
  /** Texts of the demo's `prepare` refusals (shown as written by the kit). */
  account: { missing: string; tooLong: string; digits: string; same: string };
}

export interface OperatorTexts {
  title: string;
  lead: string;
  /** Shown instead of the page's data when the kit's SMS pumping rules are off. */
  off: string;
  chartTitle: string;
  chartLead: (days: number) => string;
  /** Says the chart draws only the busiest countries; the table lists them all. */
  chartTop: (shown: number) => string;
  legendUnverified: string;
  legendVerified: string;
  chartOldest: (days: number) => string;
  chartNewest: string;
  tableCaption: (days: number) => string;
  country: string;
  day: string;
  sent: string;
  verified: string;
  unverified: string;
  /** 0 is the last 24 hours. */
  dayLabel: (daysAgo: number) => string;
  noTexts: (days: number) => string;
  trippedTitle: string;
  trippedLead: string;
  trippedCaption: string;
  noneTripped: string;
  kind: string;
  key: string;
  reasons: string;
  lastHour: string;
  lastDay: string;
  /** An unverified count beside its threshold, e.g. "7 of 6". */
  countOf: (count: number, threshold: number) => string;
  operatorRule: string;
  none: string;
  kinds: Record<'country' | 'block' | 'address' | 'user' | 'address_country', string>;
  rules: Record<'allow' | 'block', string>;
  decisionsTitle: string;
  decisionsLead: string;
  decisionsCaption: string;
  noDecisions: string;
  when: string;
  decision: string;
  numberBlock: string;
  address: string;
  user: string;
  decisions: Record<'warned' | 'refused' | 'challenged', string>;
  rulesTitle: string;
  rulesCaption: string;
  noRules: string;
  until: string;
  actTitle: string;
  actLead: string;
  actLegend: string;
  acts: Record<'block' | 'release' | 'clear', string>;
  target: string;
  targetHint: string;
  submit: string;
  done: Record<'block' | 'release', string>;
  cleared: (found: boolean) => string;
  invalidTarget: string;
  invalidAct: string;
}
