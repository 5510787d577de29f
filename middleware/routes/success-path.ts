/**
 * Where the attempt's own user goes after a fulfilment: decided on the server (the action's fixed
 * successPath, or its function told the outcome), never a URL from a parameter, a header or state.
 */
import type { KitContext } from '../context.ts';
export { leaveLandedFlash, rememberUnseenFirst, takeUnseenFirst } from '../attempts.ts';
import { guardSync } from '../deadline.ts';
import { redactSecretFragments } from '../errors.ts';
import type { Completion } from '../fulfil/fulfil.ts';
import { describeError, markingErrors } from '../logger.ts';
import { maskNumbersInPath } from '../numbers/mask-number.ts';
import { isSafeSuccessPath } from '../options/options-actions.ts';

/**
 * Where the attempt's own user goes after a fulfilment: the action's successPath function, called
 * with the outcome, or the path stored at the start. Undefined (the neutral page, logged) when the
 * function throws, returns a promise or anything but a same-origin path: the same check as a fixed
 * one. The stored path too: a store of the app's own may answer anything.
 */
export function successPathOf<Tx>(
  context: KitContext<Tx>,
  completion: Extract<Completion, { kind: 'fulfilled' }>,
  fulfilment: 'first' | 'replay',
): string | undefined {
  const { attempt } = completion;
  const chosen = context.actions.get(attempt.action)?.successPath;
  const fields = { route: 'landing', sessionId: attempt.sessionId, action: attempt.action };
  if (typeof chosen !== 'function') {
    if (attempt.returnTo === '') return chosen;
    return sameOriginOrLogged(context, fields, attempt.returnTo, 'the path stored at its start is');
  }
  // The integrator's code: a throw, or a promise (its rejection included), is logged, never thrown.
  let failed = false;
  // A KitError it throws is in the integrator's words (it may name the number): logged masked.
  const path: unknown = guardSync(
    () =>
      markingErrors(() =>
        chosen({
          sessionId: attempt.sessionId,
          userRef: attempt.userRef,
          action: attempt.action,
          params: attempt.params,
          outcome: 'fulfilled',
          fulfilment,
        }),
      ),
    (error) => {
      failed = true;
      context.logger.error(
        { ...fields, err: describeError(error) },
        `action "${attempt.action}": successPath failed (it must return a path, synchronously); no redirect`,
      );
    },
  );
  if (failed) return undefined;
  return sameOriginOrLogged(context, fields, path, 'successPath returned');
}

/** `path` when it is a same-origin path, else undefined (no redirect), logged: `what` names where it came from. */
function sameOriginOrLogged<Tx>(
  context: KitContext<Tx>,
  fields: { route: string; sessionId: string; action: string },
  path: unknown,
  what: string,
): string | undefined {
  if (isSafeSuccessPath(path)) return path;
  context.logger.error(
    // Redacted (pieces too: a URL built from a secret cut short) and its numbers masked before the
    // cut: a cut part is recognised by neither.
    {
      ...fields,
      returned: typeof path === 'string' ? maskNumbersInPath(redactSecretFragments(path)).slice(0, 200) : typeof path,
    },
    `action "${fields.action}": ${what} something other than a same-origin path starting with a single "/"; no redirect`,
  );
  return undefined;
}
