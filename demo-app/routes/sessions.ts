/** The demo's express-session: its cookie, its lifetime and its store (the demo's database). */
import type express from 'express';
import session from 'express-session';

export const SESSION_COOKIE = 'demo.sid';
export const SESSION_MAX_AGE_MS = 8 * 60 * 60 * 1000;

export function mountSessions(app: express.Express, secret: string, store: session.Store): void {
  app.use(
    session({
      name: SESSION_COOKIE,
      secret,
      store,
      resave: false,
      saveUninitialized: false,
      rolling: true,
      cookie: {
        httpOnly: true,
        // Lax: the return from the verification site is a top-level GET navigation, which carries it.
        sameSite: 'lax',
        // Secure whenever the request arrived over https (directly or, with trust proxy, via the proxy).
        secure: 'auto',
        maxAge: SESSION_MAX_AGE_MS,
        path: '/',
      },
    }),
  );
}
