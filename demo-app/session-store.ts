/**
 * An express-session Store on better-sqlite3, in the demo's own table `demo_sessions`.
 *
 * Each row expires with its cookie (or after `ttlMs` when the cookie has no expiry). Expired rows
 * are never returned and are deleted by a periodic, unref'd cleanup, so the table does not grow.
 */
import session from 'express-session';
import type { Database, Statement } from 'better-sqlite3';

export interface SqliteSessionStoreOptions {
  db: Database;
  /** Lifetime of a session whose cookie has no maxAge. Default one day. */
  ttlMs?: number;
  /** How often expired rows are deleted. Default 15 minutes; 0 disables the timer. */
  cleanupIntervalMs?: number;
  now?: () => number;
}

type Callback<T = void> = (err?: unknown, value?: T) => void;

export class SqliteSessionStore extends session.Store {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #get: Statement<[string, number]>;
  readonly #set: Statement<[{ sid: string; sess: string; expires: number }]>;
  readonly #destroy: Statement<[string]>;
  readonly #touch: Statement<[{ sid: string; expires: number; now: number }]>;
  readonly #prune: Statement<[number]>;
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(options: SqliteSessionStoreOptions) {
    super();
    const { db } = options;
    this.#ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
    this.#now = options.now ?? Date.now;
    this.#get = db.prepare('SELECT sess FROM demo_sessions WHERE sid = ? AND expires > ?');
    this.#set = db.prepare(
      `INSERT INTO demo_sessions (sid, sess, expires) VALUES (@sid, @sess, @expires)
       ON CONFLICT (sid) DO UPDATE SET sess = excluded.sess, expires = excluded.expires`,
    );
    this.#destroy = db.prepare('DELETE FROM demo_sessions WHERE sid = ?');
    this.#touch = db.prepare('UPDATE demo_sessions SET expires = @expires WHERE sid = @sid AND expires > @now');
    this.#prune = db.prepare('DELETE FROM demo_sessions WHERE expires <= ?');
    const interval = options.cleanupIntervalMs ?? 15 * 60 * 1000;
    if (interval > 0) {
      this.#timer = setInterval(() => {
        try {
          this.prune();
        } catch {
          // The database may be closing; the next tick (or the next start) prunes.
        }
      }, interval);
      this.#timer.unref();
    }
  }

  #expiresAt(sess: session.SessionData): number {
    const expires = sess.cookie?.expires;
    if (expires !== undefined && expires !== null) {
      const at = new Date(expires).getTime();
      if (Number.isFinite(at)) return at;
    }
    return this.#now() + this.#ttlMs;
  }

  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    try {
      const row = this.#get.get(sid, this.#now()) as { sess: string } | undefined;
      callback(null, row === undefined ? null : (JSON.parse(row.sess) as session.SessionData));
    } catch (error) {
      callback(error);
    }
  }

  override set(sid: string, sess: session.SessionData, callback?: Callback): void {
    try {
      this.#set.run({ sid, sess: JSON.stringify(sess), expires: this.#expiresAt(sess) });
      callback?.(null);
    } catch (error) {
      callback?.(error);
    }
  }

  override destroy(sid: string, callback?: Callback): void {
    try {
      this.#destroy.run(sid);
      callback?.(null);
    } catch (error) {
      callback?.(error);
    }
  }

  override touch(sid: string, sess: session.SessionData, callback?: Callback): void {
    try {
      this.#touch.run({ sid, expires: this.#expiresAt(sess), now: this.#now() });
      callback?.(null);
    } catch (error) {
      callback?.(error);
    }
  }

  /** Deletes expired rows; returns how many. */
  prune(): number {
    return this.#prune.run(this.#now()).changes;
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }
}
