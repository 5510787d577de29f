/**
 * The demo's two languages, English and French, chosen per request by `Accept-Language`. The
 * demo's own pages read `DemoTexts`; the kit's pages get `demoKitMessages` (the kit's messages
 * option: English extended, French complete), so every page a user sees is in one language.
 */
import type { Request } from 'express';
import type { KitMessages } from 'hosted-sms-verify-kit';
import { en } from './i18n/en.ts';
import { fr } from './i18n/fr.ts';
import { DEMO_LOCALES, type DemoLocale, type DemoTexts } from './i18n/texts.ts';

export { demoKitMessages } from './i18n/kit-messages.ts';
export { DEMO_LOCALES, type DemoLocale, type DemoTexts } from './i18n/texts.ts';

/** The best `Accept-Language` match; English when none. */
export function demoLocale(req: Request): DemoLocale {
  const match = req.acceptsLanguages([...DEMO_LOCALES]);
  return match === 'fr' ? 'fr' : 'en';
}

export const DEMO_TEXTS: Record<DemoLocale, DemoTexts> = { en, fr };

export function demoTexts(req: Request): DemoTexts {
  return DEMO_TEXTS[demoLocale(req)];
}

/** The demo's texts for a page the kit rendered, by the kit messages' language. */
export function textsFor(messages: KitMessages): DemoTexts {
  return messages.lang === 'fr' ? fr : en;
}
