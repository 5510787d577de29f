/**
 * Who may use the operator page: the demo's stand-in for an app's staff role. The page names other
 * users' addresses and userRefs, and its form blocks or releases countries for everyone, so it is
 * for the configured operators alone (DEMO_OPERATORS; by default Alice, a seeded user).
 */
import type express from 'express';
import type { Request } from 'express';
import type { DemoUser } from './db.ts';

/** The operators when none are configured: one seeded demo user. */
export const DEFAULT_OPERATORS: readonly string[] = ['usr_alice'];

const OPERATORS_KEY = 'demoOperators';

/** Keeps the operators' user ids on the app, for every page's menu and the operator routes. */
export function setOperators(app: express.Express, operators: readonly string[]): void {
  if (!Array.isArray(operators) || operators.some((id) => typeof id !== 'string' || id === '')) {
    throw new TypeError("createDemoApp: operators must be a list of demo user ids, e.g. ['usr_alice'].");
  }
  app.locals[OPERATORS_KEY] = new Set(operators);
}

/** Whether `user` is one of the app's operators; no list kept means nobody is. */
export function isOperator(req: Request, user: DemoUser): boolean {
  const operators: unknown = req.app.locals[OPERATORS_KEY];
  return operators instanceof Set && operators.has(user.id);
}
