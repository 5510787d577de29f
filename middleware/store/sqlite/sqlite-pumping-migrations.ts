/**
 * The SMS pumping counters' migrations of the SQLite store (12 and 13 of sqlite-schema.ts's list).
 * Like every migration, their text stays as it was first run.
 */
import { additive } from '../schema-versions.ts';

/**
 * 12: the SMS pumping counters: texts sent and verified per key and hour (a key per country,
 * number block, client address, user, and address with country), each send's keys so a
 * verification counts where its text was counted, the decisions, and the operators' rules.
 */
export const PUMPING_COUNTERS = additive(`CREATE TABLE verify_kit_pumping_counts (
     dimension TEXT NOT NULL,
     key       TEXT NOT NULL,
     hour      INTEGER NOT NULL,
     sent      INTEGER NOT NULL DEFAULT 0,
     verified  INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (dimension, key, hour)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX verify_kit_pumping_counts_hour ON verify_kit_pumping_counts (hour);
   CREATE TABLE verify_kit_pumping_sends (
     session_id TEXT PRIMARY KEY,
     hour       INTEGER NOT NULL,
     keys       TEXT NOT NULL,
     verified   INTEGER NOT NULL DEFAULT 0
   ) STRICT;
   CREATE INDEX verify_kit_pumping_sends_hour ON verify_kit_pumping_sends (hour);
   CREATE TABLE verify_kit_pumping_decisions (
     id         INTEGER PRIMARY KEY AUTOINCREMENT,
     decided_at INTEGER NOT NULL,
     decision   TEXT NOT NULL,
     reasons    TEXT NOT NULL,
     country    TEXT NOT NULL,
     block      TEXT NOT NULL,
     address    TEXT NOT NULL,
     user_ref   TEXT NOT NULL
   ) STRICT;
   CREATE INDEX verify_kit_pumping_decisions_at ON verify_kit_pumping_decisions (decided_at);
   CREATE TABLE verify_kit_pumping_rules (
     dimension TEXT NOT NULL,
     key       TEXT NOT NULL,
     rule      TEXT NOT NULL CHECK (rule IN ('allow', 'block')),
     until     INTEGER NOT NULL,
     set_at    INTEGER NOT NULL,
     PRIMARY KEY (dimension, key)
   ) STRICT, WITHOUT ROWID;`);

/**
 * 13: starts refused because a key's rules tripped, per key and hour: a key stays refused while
 * an attack keeps pressing on it.
 */
export const PUMPING_REFUSED = additive(
  `ALTER TABLE verify_kit_pumping_counts ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;`,
);
