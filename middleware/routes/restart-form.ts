/**
 * The restart form's data: a POST back to the start route with a fresh CSRF token. Computed here,
 * in the route, so the renderer (pages/) only draws what it is handed.
 */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import type { RestartForm } from '../pages/pages.ts';
import { csrfToken } from './csrf.ts';

/** A start-again form for `actionName`, or undefined when none can be offered to this request. */
export function restartFormFor<Tx>(
  context: Pick<KitContext<Tx>, 'routes' | 'platform' | 'actions' | 'csrf'>,
  req: Request,
  actionName: string,
  restartState?: string,
): RestartForm | undefined {
  const startPath = context.routes.start;
  if (startPath === false || context.platform !== 'web' || !context.actions.has(actionName)) return undefined;
  let token: string;
  try {
    token = csrfToken(context, req);
  } catch {
    return undefined;
  }
  return { startPath, csrfToken: token, actionName, ...(restartState === undefined ? {} : { restartState }) };
}
