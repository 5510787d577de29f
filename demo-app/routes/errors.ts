/** What no route answered, and errors: JSON under /api/, a page in the visitor's language elsewhere. */
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { KitLogger } from 'hosted-sms-verify-kit';
import { demoTexts } from '../i18n.ts';
import { errorPage } from '../views/errors.ts';

export function mountNotFound(app: express.Express): void {
  app.use((req: Request, res: Response) => {
    if (req.path.startsWith('/api/')) {
      res.status(404).json({ error: 'not_found', message: 'No such endpoint.' });
      return;
    }
    res.status(404).send(errorPage({ t: demoTexts(req), status: 404, ...demoTexts(req).errors.notFound }));
  });
}

export function mountErrorPages(app: express.Express, logger: KitLogger | undefined): void {
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    const clientError = typeof status === 'number' && status >= 400 && status < 500;
    if (!clientError) logDemoError(logger, 'demo: unhandled error', error);
    if (res.headersSent) return;
    const code = clientError ? status : 500;
    if (req.path.startsWith('/api/')) {
      res.status(code).json({ error: clientError ? 'bad_request' : 'internal_error' });
      return;
    }
    const t = demoTexts(req);
    res.status(code).send(errorPage({ t, status: code, ...(clientError ? t.errors.badRequest : t.errors.server) }));
  });
}

/**
 * Logs an error's message on the demo's logger. A logger that throws, or returns a promise that
 * rejects, loses its line and never the answer: the page is still sent.
 */
export function logDemoError(logger: KitLogger | undefined, message: string, error: unknown): void {
  try {
    const written: unknown = logger?.error({ err: error instanceof Error ? error.message : String(error) }, message);
    if (written instanceof Promise) written.catch(() => undefined);
  } catch {
    // Logging is best effort.
  }
}
