/**
 * Each decision of a step-up guard, logged and counted by scope and by the route's pattern, never
 * the requested path.
 */
import type { Request } from 'express';
import type { KitContext } from '../context.ts';
import { countStepUp, type StepUpEvent } from '../telemetry.ts';
import type { ResolvedGuard } from './guard-options.ts';

/** A guard as it runs: the kit's context and its resolved options. */
export type Guarded<Tx> = { context: KitContext<Tx>; guard: ResolvedGuard };

/**
 * The route's pattern (`/accounts/:account/payee`), not the requested path: few values, and no ids
 * or tokens. A mount's path (`app.use('/accounts/:account', router)`) reaches the guard only as the
 * path requested (`req.baseUrl`), so a mount is counted as `*`.
 */
function routePattern(req: Request): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  return `${req.baseUrl === '' ? '' : '*'}${typeof pattern === 'string' ? pattern : ''}` || '/';
}

export function note<Tx>({ context, guard }: Guarded<Tx>, req: Request, event: StepUpEvent): void {
  const pattern = routePattern(req);
  countStepUp(event, guard.scope.name, pattern);
  // The pattern, as counted: a requested path may hold account ids, a query the integrator's tokens.
  context.logger.info({ route: 'step-up', scope: guard.scope.name, event, routePattern: pattern }, `step-up ${event}`);
}
