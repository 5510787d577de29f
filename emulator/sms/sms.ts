/**
 * Sends a session's OTP, once. Normally at create (the spec's "An SMS OTP is sent to the
 * destination"); for a userRef with an enrolled passkey it is deferred until the user asks for a
 * code on the hosted page, so a passkey verification sends no SMS at all (see README.md).
 */
import type { EmulatorContext } from '../context.ts';
import { idempotencyKeyText } from '../api/idempotency.ts';
import type { Session } from '../api/sessions.ts';
import { priceOf } from './price.ts';

/** Sums of prices stay exact to a millionth (no floating-point drift over a month of texts). */
const round = (amount: number) => Math.round(amount * 1e6) / 1e6;

function countOne(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

export function sendOtpOnce(context: EmulatorContext, session: Session): void {
  if (session.otpSentAt !== undefined) return; // no resend: one code per session
  session.otpSentAt = context.clock.now();
  context.outbox.send(session.destination, session.otp, session.id);
  context.stats.smsSent += 1;
  const { country, price } = priceOf(context.smsPrices, session.destination);
  const byCountry = (context.stats.smsByCountry[country] ??= { sent: 0, cost: 0 });
  byCountry.sent += 1;
  byCountry.cost = round(byCountry.cost + price);
  context.stats.smsCost = round(context.stats.smsCost + price);
  if (session.idempotencyKey === undefined) return;
  // Counted under the key's text, as a test names it: a UTF-8 key arrives as one character per byte.
  const key = idempotencyKeyText(session.idempotencyKey);
  countOne(context.stats.smsByIdempotencyKey, key);
  const byClient = context.stats.smsByClientIdempotencyKey;
  countOne((byClient[session.clientId] ??= Object.create(null) as Record<string, number>), key);
}

/** At create: a passkey user gets the choice on the hosted page instead of an SMS they may not need. */
export function smsDeferredAtCreate(context: EmulatorContext, session: Session): boolean {
  return context.relyingParty !== undefined && context.passkeys.has(session.clientId, session.userRef);
}
