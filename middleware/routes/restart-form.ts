/**
 * The restart form's data: a POST back to the start route with a fresh CSRF token. Computed here,
 * in the route, so the renderer (pages/) only draws what it is handed.
 */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import type { RestartForm } from '../pages/pages.ts';
import { csrfToken } from './csrf.ts';
import { maskDestination } from '../numbers/mask-number.ts';

/** A start-again form for `actionName`, or undefined when none can be offered to this request. */
export function restartFormFor<Tx>(
  context: Pick<KitContext<Tx>, 'routes' | 'platform' | 'actions' | 'csrf'>,
  req: Request,
  actionName: string,
  restartState?: string,
  keptNumber?: string | null,
): RestartForm | undefined {
  const startPath = context.routes.start;
  if (startPath === false || context.platform !== 'web' || !context.actions.has(actionName)) return undefined;
  let token: string;
  try {
    token = csrfToken(context, req);
  } catch {
    return undefined;
  }
  const entered = context.actions.get(actionName)?.destination === 'entered';
  return {
    startPath,
    csrfToken: token,
    actionName,
    ...(restartState === undefined ? {} : { restartState }),
    ...(entered && typeof keptNumber === 'string' ? { maskedNumber: maskDestination(keptNumber) } : {}),
  };
}
