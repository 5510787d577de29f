/**
 * The kit's router: an Express app with the routes the options name, that refuses to run below a
 * prefix (the landing answers at the returnUrl's path) and, mounted, runs on the host app's requests.
 */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { KitContext } from '../context.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { boundedStepUp } from '../step-up/bounded-step-up.ts';
import { stepUpConfirmHandler, stepUpConfirmSendHandler } from '../step-up/confirm-route.ts';
import { answerError, route } from './answer-error.ts';
import { landingHandler } from './landing.ts';
import { mountMobile } from './mobile.ts';
import { withStoreDeadlines } from './request-store.ts';
import { mountStart } from './start.ts';

function mountedAtWrongPath(landingPath: string | false, where: string): KitError {
  const landing =
    landingPath === false ? '' : ` since the landing must answer at the returnUrl's path "${landingPath}"`;
  return new KitError(
    KitErrorCode.MountedAtWrongPath,
    `The verification kit's router is mounted at "${where}": mount it at '/' with app.use(kit.router)${landing}.`,
  );
}

/**
 * Mounted with app.use(kit.router), Express moves every request onto this app's prototypes and back,
 * work on every request that changes nothing for the kit's routes. This app's prototypes inherit the
 * host app's (Express sets that on mount) and the kit reads its query itself (`queryOf`), so on
 * Express 5 a request already carrying the host's prototypes runs the kit's routes as it is;
 * anything else (Express 4, a host without them, the app used unmounted) is handled as by any
 * Express app.
 */
function dispatchInPlace(kitApp: Express): void {
  // `handle` is what app.use calls for a mounted app; Express's types leave it out.
  const app = kitApp as Express & { handle(req: Request, res: Response, next?: NextFunction): void };
  const handleAsApp = app.handle.bind(app);
  app.handle = (req, res, next) => {
    const hostShaped =
      Object.getPrototypeOf(req) === Object.getPrototypeOf(app.request) &&
      Object.getPrototypeOf(res) === Object.getPrototypeOf(app.response);
    if (hostShaped && next !== undefined && hasRouterGetter(app)) app.router(req, res, next);
    else if (next === undefined) handleAsApp(req, res);
    else handleAsApp(req, res, handingBack(req, res, next));
  };
}

/**
 * The `next` of a request the kit's app handled: it goes on with the prototypes it came with. Reached
 * through a Router's `use` (not app.use), nothing else puts them back, and every later route of the
 * app would see the kit's app as `req.app` and lose the app's own request and response helpers.
 */
function handingBack(req: Request, res: Response, next: NextFunction): NextFunction {
  const requestShape: unknown = Object.getPrototypeOf(req);
  const responseShape: unknown = Object.getPrototypeOf(res);
  return (error?: unknown) => {
    Object.setPrototypeOf(req, requestShape as object);
    Object.setPrototypeOf(res, responseShape as object);
    next(error);
  };
}

/** Express 5 serves its router at `app.router`; Express 4 keeps it behind `lazyrouter()` and throws on that getter. */
function hasRouterGetter(app: Express): boolean {
  return typeof (app as Express & { lazyrouter?: unknown }).lazyrouter !== 'function';
}

/**
 * Once mounted, the kit's requests and responses inherit the host app's (Express sets that on
 * mount), but each still names the kit's own app as `req.app` and `res.app`. Where Express runs the
 * kit as a mounted app (Express 4), the integrator's hooks would then read the kit's empty
 * `req.app.locals` and default settings instead of their app's: without those names, `req.app` is
 * the host app, as on Express 5, which runs the kit's routes on the host's request in place.
 */
function showHostApp(kitApp: Express): void {
  delete (kitApp.request as { app?: unknown }).app;
  delete (kitApp.response as { app?: unknown }).app;
}

/**
 * The returnUrl's path as a route both Express majors match literally, whatever it holds: `(`, `*`,
 * `+`, `!`, `:` or `[` are route syntax to Express 4 and refused by Express 5. Case and a trailing
 * slash count, as for the other routes.
 */
function literalRoute(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
}

/** The router of a kit built from `context`: app.use(kit.router). */
export function buildRouter<Tx>(context: KitContext<Tx>): Express {
  const router = express();
  dispatchInPlace(router);
  router.disable('x-powered-by');
  router.set('case sensitive routing', true);
  router.set('strict routing', true);
  const { routes } = context;

  // Startup detection: app.use('/prefix', kit.router) throws here, at the app.use call.
  router.on('mount', () => {
    const at = router.mountpath;
    if (at !== '/') throw mountedAtWrongPath(routes.landing, Array.isArray(at) ? at.join(', ') : String(at));
    showHostApp(router);
  });
  // First-request detection: the router reached below a prefix (e.g. inside a mounted sub-app).
  router.use((req, res, next) => {
    if (req.baseUrl === '') {
      next();
      return;
    }
    answerError(context, 'mount', 'html', mountedAtWrongPath(routes.landing, req.baseUrl), res, next);
  });

  // A user's request waits on the kit's store no longer than hookTimeouts.store.
  const onRequests = withStoreDeadlines(context);
  if (routes.start !== false) mountStart(router, onRequests, routes.start);
  if (routes.landing !== false) {
    router.get(
      literalRoute(routes.landing),
      route(onRequests, 'landing', 'html', landingHandler(onRequests, routes.landing)),
    );
  }
  if (routes.mobileComplete !== false) mountMobile(router, onRequests, routes.mobileComplete);
  const { stepUp } = context.store;
  if (routes.stepUp !== false && context.scopes.size > 0 && stepUp !== undefined) {
    const bounded = boundedStepUp(stepUp, context);
    router.get(routes.stepUp, route(context, 'step-up', 'html', stepUpConfirmHandler(context, bounded)));
    // Any other method: the confirmation's POST, which an app's method override may have renamed.
    router.all(routes.stepUp, route(context, 'step-up', 'html', stepUpConfirmSendHandler(context, bounded)));
  }
  return router;
}
