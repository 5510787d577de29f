/**
 * The app's kit: its attempts live in the demo's own database, so an action's effect and the
 * fulfilment mark commit in one transaction (the `tx` each fulfil receives is that transaction's handle).
 */
import { createHmac } from 'node:crypto';
import type { Request } from 'express';
import { createVerificationKit, type VerificationKit } from 'hosted-sms-verify-kit';
import { createDemoActions } from './actions.ts';
import { endGrantsAfterPhoneChange } from './after-phone-change.ts';
import type { DemoAppOptions } from './app-options.ts';
import type { DemoData } from './data.ts';
import type { DemoUser } from './db.ts';
import { CHANGE_PHONE_STEP_UP, NEW_RECOVERY_CODES, SEE_SECURITY } from './domain.ts';
import { DEMO_TEXTS, demoKitMessages, demoTexts } from './i18n.ts';
import { demoKitPages } from './views/kit-pages.ts';

export function createDemoKit(
  options: DemoAppOptions,
  data: DemoData,
  now: () => number,
  signedInUser: (req: Request) => Promise<DemoUser | undefined>,
): VerificationKit<unknown> {
  const kit: VerificationKit<unknown> = createVerificationKit<unknown>({
    baseUrl: options.verifyBaseUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    returnUrl: options.returnUrl,
    store: data.store,
    actions: createDemoActions(data.reads, data.writes, now),
    // Step-up for the demo's own Security page and its form (routes/account-security.ts), and the phone change.
    scopes: [
      {
        name: SEE_SECURITY,
        operationSensitivity: 'sensitive',
        label: { en: DEMO_TEXTS.en.security.seeLabel, fr: DEMO_TEXTS.fr.security.seeLabel },
      },
      {
        name: NEW_RECOVERY_CODES,
        operationSensitivity: 'sensitive',
        label: { en: DEMO_TEXTS.en.security.replaceLabel, fr: DEMO_TEXTS.fr.security.replaceLabel },
      },
      // The change-phone action's start requires it (actions.ts).
      {
        name: CHANGE_PHONE_STEP_UP,
        operationSensitivity: 'sensitive',
        label: { en: DEMO_TEXTS.en.security.changePhoneLabel, fr: DEMO_TEXTS.fr.security.changePhoneLabel },
      },
    ],
    async resolveUser(req) {
      const user = await signedInUser(req);
      return user === undefined ? null : { userRef: user.id, destination: user.phone };
    },
    // A number typed without "+" is read as one of the country of the page's language.
    defaultCountry: (req) => (demoTexts(req) === DEMO_TEXTS.fr ? 'FR' : 'US'),
    pages: demoKitPages,
    // Destination counters are keyed by an HMAC; the demo derives that key from its own server secret.
    limits: {
      ...options.startLimits,
      destinationKey: createHmac('sha256', options.sessionSecret).update('verify kit destination limits').digest(),
    },
    ...(options.pumping === undefined ? {} : { pumping: options.pumping }),
    // After commit, never inside the transaction: the "emails" shown on the Activity page, and
    // after a phone change the end of the user's step-up grants.
    onOutcome: endGrantsAfterPhoneChange(data.onOutcome, () => kit),
    // English and French, chosen by Accept-Language (the kit's default), like the demo's own pages.
    messages: demoKitMessages,
    now,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  return kit;
}
