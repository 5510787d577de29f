/** Who is signed in: the session's user, the viewer a page shows, and the guard of signed-in pages. */
import type { Request, Response } from 'express';
import type { DemoReads } from '../data.ts';
import { demoCsrfToken } from '../csrf.ts';
import type { DemoUser } from '../db.ts';
import { isOperator } from '../operators.ts';
import '../session-data.ts';
import type { Viewer } from '../views/layout.ts';

export async function signedInUser(queries: DemoReads, req: Request): Promise<DemoUser | undefined> {
  const id = req.session?.userId;
  return typeof id === 'string' ? queries.user(id) : undefined;
}

export function viewer(req: Request, user: DemoUser): Viewer {
  return { name: user.name, csrf: demoCsrfToken(req), operator: isOperator(req, user) };
}

/** Pages for signed-in users; everyone else goes to the (fixed) sign-in path. */
export function withUser(
  queries: DemoReads,
  handler: (req: Request, res: Response, user: DemoUser) => void | Promise<void>,
) {
  return async (req: Request, res: Response): Promise<void> => {
    const user = await signedInUser(queries, req);
    if (user === undefined) {
      res.redirect(303, '/signin');
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    // A rejected promise goes to Express's error handler.
    await handler(req, res, user);
  };
}
