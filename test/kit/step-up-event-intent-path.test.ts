/**
 * A kept form's step-up verification returns its user to the kit's confirmation, whose address
 * names the kept form's id (`/verify/step-up?intent=<id>`). The outcome event carries that id
 * whole, in `intentId` and in `returnPath` alike, whatever digits it happens to hold: an id the
 * kit drew is no phone number, and masked it would not match the event's own `intentId`. A kept
 * page's path is still masked where it may name a number.
 */
import { expect, it } from 'vitest';
import { eventParamsOf } from '../../middleware/step-up/scope-event.ts';

// 43 characters of base64url, as the kit draws them, holding ten digits.
const INTENT_ID = 'aB3_4567890-cDeFgHiJkLmNoPqRsTuVwXyZ12abcde';

const scopeParams = (returnPath: string) => ({
  browserSession: 'digest-of-the-browser-session',
  intentId: INTENT_ID,
  resourceKey: '',
  returnPath,
});

it("a kept form's return path names its intent id as the event's intentId does", () => {
  const params = eventParamsOf(scopeParams(`/verify/step-up?intent=${INTENT_ID}`));
  expect(params).toMatchObject({ intentId: INTENT_ID, returnPath: `/verify/step-up?intent=${INTENT_ID}` });
});

it("a kept page's path naming a number is masked as before", () => {
  const params = eventParamsOf(scopeParams('/numbers/+447400123456/calls'));
  expect(params).toMatchObject({ intentId: INTENT_ID, returnPath: '/numbers/••\u00a056/calls' });
});
