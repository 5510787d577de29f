// The kit's options, shared by the app (app.js) and the sweep job:
//   npx hosted-sms-verify-kit sweep --once --config ./verify.config.js
// VERIFY_BASE_URL, VERIFY_CLIENT_ID, VERIFY_CLIENT_SECRET and VERIFY_RETURN_URL come from the
// environment (verifyOptionsFromEnv); DATABASE_PATH names the SQLite file (default ./app.sqlite).
import { verifyOptionsFromEnv } from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';

/** Your own tables live beside the kit's, in the same file, so a fulfilment commits with them. */
function createTables(db) {
  db.exec(`CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, phone TEXT NOT NULL, phone_verified_at INTEGER);
    CREATE TABLE IF NOT EXISTS phone_confirmations (session_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, phone TEXT);
    INSERT OR IGNORE INTO users (id, phone) VALUES ('alice', '+15550100001'), ('bob', '+15550100002');`);
}

export default function verificationOptions(env = process.env) {
  // The store opens the file (and closes it on store.close()); `store.db` is the better-sqlite3 Database.
  const store = createSqliteStore({ database: env.DATABASE_PATH ?? 'app.sqlite' });
  const db = store.db;
  createTables(db);
  return {
    ...verifyOptionsFromEnv(env),
    store,
    // A number typed without "+" ("07400 123456") is read as a number of this country.
    defaultCountry: 'GB',
    resolveUser: (req) => {
      const user = db.prepare('SELECT id, phone FROM users WHERE id = ?').get(req.session.userId ?? '');
      return user === undefined ? null : { userRef: user.id, destination: user.phone };
    },
    actions: [
      {
        name: 'confirm_phone',
        operationSensitivity: 'normal',
        successPath: '/done',
        // Marking a number verified needs proof the user holds it: by default a passkey the hosted
        // page saved for the user (under any earlier number) answers instead of the texted code.
        proves: 'destination',
        // Runs inside the kit's transaction, exactly once per verified session: synchronous on SQLite.
        fulfil: (tx, attempt) => {
          // The number the code went to, and only while it is still the user's: a confirmation that
          // lands after a change of number confirms nothing.
          const confirmed = tx
            .prepare('UPDATE users SET phone_verified_at = ? WHERE id = ? AND phone = ?')
            .run(Date.now(), attempt.userRef, attempt.destination).changes;
          if (confirmed === 0) return;
          tx.prepare('INSERT INTO phone_confirmations VALUES (?, ?, ?)').run(
            attempt.sessionId,
            attempt.userRef,
            attempt.destination,
          );
        },
      },
      {
        // Texts the number typed into the form's `phone` field; fulfil gets it as E.164.
        name: 'change_phone',
        operationSensitivity: 'sensitive',
        successPath: '/done',
        destination: 'entered',
        proves: 'destination',
        // A stolen session must not move every later code to another phone: the user first confirms
        // it's them, by a code to their current number or their passkey (within 10 minutes, in this
        // browser), then the new one.
        // The app declares the scope (app.js); the sweep job needs none.
        requireRecentVerification: { scope: 'phone_change', maxAge: 600 },
        fulfil: (tx, attempt) => {
          tx.prepare('UPDATE users SET phone = ?, phone_verified_at = ? WHERE id = ?').run(
            attempt.destination,
            Date.now(),
            attempt.userRef,
          );
          tx.prepare('INSERT INTO phone_confirmations VALUES (?, ?, ?)').run(
            attempt.sessionId,
            attempt.userRef,
            attempt.destination,
          );
        },
      },
    ],
  };
}
