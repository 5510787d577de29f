/** What the demo keeps in its express-session (besides the kit's CSRF token). */
declare module 'express-session' {
  interface SessionData {
    /** The signed-in demo user's id (their stable userRef). */
    userId?: string;
    /** Token for the demo's own forms. */
    demoCsrf?: string;
  }
}

export {};
