/**
 * What a start spends before its session exists, and gives back when none came to exist: the
 * start limits' count (a late one given back once it lands), the app's beforeCreate, and the
 * give-backs of a start the service created no session for.
 */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import type { StartReceipt } from '../limits/start-limits.ts';
import { describeError } from '../logger.ts';
import type { ResolvedUser } from '../options/options.ts';
import type { PumpingPass } from '../pumping/pumping-guard.ts';
import type { ActionDefinition } from '../types.ts';
import { showAsWritten } from './answer-error.ts';
import { withHookDeadline } from './hook-deadline.ts';

/**
 * The start limits' count. Limits may be the integrator's own (or count on its store): one that
 * throws or is late refuses the start, never lets it through unchecked, since they guard the SMS
 * budget. A late count that lands after all is given back: its start was refused, nothing sent.
 */
async function consumeStartBudgets<Tx>(
  context: KitContext<Tx>,
  req: Request,
  user: ResolvedUser,
): Promise<StartReceipt | undefined> {
  const { startLimits } = context;
  if (startLimits === undefined) return undefined;
  let consuming: Promise<unknown> | undefined;
  try {
    const receipt = await withHookDeadline(
      context,
      'limits',
      () => (consuming = startLimits.consume(req, { userRef: user.userRef, destination: user.destination })),
    );
    return receipt ?? undefined;
  } catch (error) {
    Promise.resolve(consuming)
      .then((late) => giveBack(context, giveBackOf(late, 'refund')))
      .catch(() => undefined);
    throw error;
  }
}

/**
 * Limits and the integrator's hook run before any session exists, so a refusal sends no SMS.
 * Returns the start limits' receipt (undefined without limits).
 */
export async function allowStart<Tx>(
  context: KitContext<Tx>,
  req: Request,
  user: ResolvedUser,
  action: ActionDefinition<Tx>,
): Promise<StartReceipt | undefined> {
  const receipt = await consumeStartBudgets(context, req, user);
  const { beforeCreate } = context;
  if (beforeCreate === undefined) return receipt ?? undefined;
  const attempt = { userRef: user.userRef, destination: user.destination, action: action.name };
  try {
    await withHookDeadline(context, 'beforeCreate', () => beforeCreate(req, attempt));
  } catch (error) {
    // Refused before any session existed, so nothing was sent: the number's budget is given back
    // (starts aimed at a number must not lock its owner out); the requester's stay spent.
    await giveBack(context, giveBackOf(receipt, 'refundDestination'));
    throw showAsWritten(error);
  }
  return receipt ?? undefined;
}

/**
 * A start the service created no session for (busy through the create's retries, or a definite
 * refusal): no SMS, so it is not counted against the user, nor its text by the SMS pumping rules;
 * the error is answered as before. A give-back that fails or is late is only logged: the user's answer
 * waits on it no longer than its deadline.
 */
export async function giveBackUnsent<Tx>(
  context: KitContext<Tx>,
  receipt: StartReceipt | undefined,
  pass?: PumpingPass,
) {
  await pass?.unsent();
  await giveBack(context, giveBackOf(receipt, 'refund'));
}

/**
 * A receipt's give-back, if it has one: limits of the app's own may resolve with anything (a rate
 * limiter's own result), which gives nothing back rather than failing the answer with a TypeError.
 */
function giveBackOf(receipt: unknown, name: keyof StartReceipt): (() => Promise<void>) | undefined {
  const method: unknown = typeof receipt === 'object' && receipt !== null ? Reflect.get(receipt, name) : undefined;
  return typeof method === 'function' ? () => (method as () => Promise<void>).call(receipt) : undefined;
}

/** Runs a counted start's refund; one that fails or is late is only logged, after its deadline. */
async function giveBack<Tx>(context: KitContext<Tx>, refund: (() => Promise<void>) | undefined): Promise<void> {
  if (refund === undefined) return;
  try {
    await withHookDeadline(context, 'limits', refund);
  } catch (refundError) {
    context.logger.warn({ route: 'start', err: describeError(refundError) }, 'could not give back a start budget');
  }
}
