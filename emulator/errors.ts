/**
 * The service's error body: `{ isSuccess: false, errorCode, message }`, or only `{ errorCode }` where
 * the answer's `res.locals.bareErrors` is set (a test's `bareErrors` fault, on the backend API).
 * Messages never carry a secret.
 */
import type { Request, RequestHandler, Response } from 'express';

export function sendError(res: Response, status: number, errorCode: string, message: string): void {
  res.status(status).json(res.locals.bareErrors === true ? { errorCode } : { isSuccess: false, errorCode, message });
}

/**
 * A route whose handler returns a promise: a rejection goes on to the app's error handler (the
 * service's 500). Express 5 forwards it by itself; Express 4 would leave it unhandled.
 */
export function forwardingRejections<P = Record<string, string>>(
  handler: (req: Request<P>, res: Response) => Promise<void>,
): RequestHandler<P> {
  return (req, res, next) => {
    handler(req, res).catch(next);
  };
}
