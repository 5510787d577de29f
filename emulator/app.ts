/** Assembles the emulator's Express app from its routers. */
import express from 'express';
import helmet from 'helmet';
import { apiRouter } from './api/api.ts';
import type { EmulatorContext } from './context.ts';
import { controlRouter } from './control/control.ts';
import { sendError } from './errors.ts';
import { hostedPageRouter } from './hosted/hosted-page.ts';
import { inboxRouter } from './sms/inbox.ts';

/**
 * With a page host of its own, the hosted page answers there only, and the API never there: an
 * integration that builds the page's address from the API's (`${baseUrl}/verify`) instead of
 * using `verifyUrl` as returned fails here as against the service, its handoff unspent.
 */
function onlyOnItsHost(context: EmulatorContext): express.RequestHandler {
  // Read at the first request: the origins are known once the server listens.
  let pageHost: string | undefined;
  let ownPageHost = false;
  return (req, res, next) => {
    if (pageHost === undefined) {
      pageHost = new URL(context.pageOrigin).host;
      ownPageHost = pageHost !== new URL(context.origin).host;
    }
    if (!ownPageHost) return next();
    const onPageHost = req.get('host')?.toLowerCase() === pageHost;
    const forPage = req.path === '/verify' || req.path.startsWith('/verify/');
    if (forPage === onPageHost) return next();
    sendError(res, 404, 'not_found', 'Not found.');
  };
}

export function createApp(context: EmulatorContext, options: { control: boolean }): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The service's paths are exact: /SESSION, /session/ or /verify/ do not reach it (an integration
  // that builds or extends verifyUrl must fail here as it would against the service).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  // Helmet's defaults for every answer; the hosted page and inbox set their own, tighter CSP.
  app.use(helmet({ strictTransportSecurity: false })); // plain http on loopback
  app.use(onlyOnItsHost(context));
  app.use(apiRouter(context));
  app.use('/verify', hostedPageRouter(context));
  if (options.control) {
    app.use('/_control', controlRouter(context));
    app.use(inboxRouter(context));
  }
  app.use((_req, res) => {
    sendError(res, 404, 'not_found', 'Not found.');
  });
  // Whatever a route did not answer: the service's error shape, never Express's page with a stack.
  app.use((error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    sendError(res, 500, 'internal_error', 'The emulator could not answer this request.');
  });
  return app;
}
