/**
 * Diagnostic (not part of npm run bench): the fulfil transaction and the lookup by state, kit store vs the
 * baseline's hand-written statements, in isolation on 10k rows (files in /tmp/kb). NO_CKPT=1 turns WAL
 * auto-checkpoints off, DROP_IDX=1 drops the kit's two partial indexes, to attribute the difference.
 *
 *   npx tsx bench/micro/store-micro.ts
 */
import { performance } from 'node:perf_hooks';
import { mkdirSync, rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { onlySettlement } from '../../middleware/store/batch.ts';
import { newState } from '../common.ts';
const N = 10000;
mkdirSync('/tmp/kb', { recursive: true });
rmSync('/tmp/kb/k.sqlite', { force: true });
rmSync('/tmp/kb/k.sqlite-wal', { force: true });
rmSync('/tmp/kb/b.sqlite', { force: true });
rmSync('/tmp/kb/b.sqlite-wal', { force: true });
const store = createSqliteStore({ database: '/tmp/kb/k.sqlite' });
store.db.exec('CREATE TABLE bench_grants (id INTEGER PRIMARY KEY, session_id TEXT, user_ref TEXT)');
if (process.env.NO_CKPT) {
  store.db.pragma('wal_autocheckpoint = 0');
}
if (process.env.DROP_IDX) {
  store.db.exec('DROP INDEX verify_kit_attempts_due; DROP INDEX verify_kit_attempts_age');
}
const g = store.db.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
const rows = Array.from({ length: N }, (_, i) => ({
  state: newState(),
  sessionId: `ses_${i}_${newState().slice(0, 20)}`,
}));
store.db.exec('BEGIN');
for (const r of rows)
  void store.insertAttempt({
    state: r.state,
    sessionId: r.sessionId,
    userRef: 'u',
    action: 'grant',
    params: null,
    destination: '+15550100001',
    returnTo: '/done',
    sensitivity: 'normal',
    platform: 'web',
    createdAt: Date.now(),
    nextCheckAt: Date.now(),
  });
store.db.exec('COMMIT');
const b = new BetterSqlite3('/tmp/kb/b.sqlite');
b.pragma('journal_mode = WAL');
b.pragma('synchronous = NORMAL');
if (process.env.NO_CKPT) b.pragma('wal_autocheckpoint = 0');
b.exec(
  `CREATE TABLE attempts (state TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, user_ref TEXT NOT NULL, action TEXT NOT NULL, return_to TEXT NOT NULL, outcome TEXT NOT NULL DEFAULT 'pending', created_at INTEGER NOT NULL, fulfilled_at INTEGER) STRICT; CREATE TABLE bench_grants (id INTEGER PRIMARY KEY, session_id TEXT, user_ref TEXT)`,
);
const ins = b.prepare(
  'INSERT INTO attempts (state, session_id, user_ref, action, return_to, created_at) VALUES (?,?,?,?,?,?)',
);
b.transaction(() => {
  for (const r of rows) ins.run(r.state, r.sessionId, 'u', 'grant', '/done', Date.now());
})();
const byState = b.prepare('SELECT session_id, user_ref, return_to, outcome FROM attempts WHERE state = ?');
const mark = b.prepare(
  "UPDATE attempts SET outcome = 'fulfilled', fulfilled_at = ? WHERE session_id = ? AND outcome = 'pending'",
);
const bg = b.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
const fulfil = b.transaction((sid: string) => {
  if (mark.run(Date.now(), sid).changes === 1) bg.run(sid, 'u');
});
const tk = { find: 0, tx: 0 };
const tb = { find: 0, tx: 0 };
for (let i = 0; i < N; i++) {
  const r = rows[i]!;
  let t = performance.now();
  const a = await store.findAttemptByState(r.state);
  tk.find += performance.now() - t;
  t = performance.now();
  // A batch of one, as the landing commits; its effect's error is thrown.
  onlySettlement(
    await store.fulfilBatch([
      {
        attempt: a!,
        effect: (_tx, at) => {
          g.run(at.sessionId, at.userRef);
        },
        now: Date.now(),
        // As the baseline: no ordering between attempts (one user holds all of them here).
        options: { ordering: 'independent' },
      },
    ]),
  );
  tk.tx += performance.now() - t;
  t = performance.now();
  byState.get(r.state);
  tb.find += performance.now() - t;
  t = performance.now();
  fulfil.immediate(r.sessionId);
  tb.tx += performance.now() - t;
}
console.log('kit  µs/op find', ((tk.find / N) * 1000).toFixed(1), 'tx', ((tk.tx / N) * 1000).toFixed(1));
console.log('base µs/op find', ((tb.find / N) * 1000).toFixed(1), 'tx', ((tb.tx / N) * 1000).toFixed(1));
