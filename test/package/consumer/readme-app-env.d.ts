// What a TypeScript app declares of its own beside the README's app: its session's user and the
// variables it requires.
import 'express-session';

declare module 'express-session' {
  interface SessionData {
    user: { userRef: string; destination: string };
  }
}

declare global {
  namespace NodeJS {
    interface ProcessEnv {
      SESSION_SECRET: string;
    }
  }
}
