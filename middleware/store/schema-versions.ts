/**
 * What both stores share about schema versions across kit versions running on one database (a
 * rolling deploy, a rollback): each migration says whether code of the version before it still
 * works on the database after it, and a kit starts on a database a newer kit migrated as long as
 * no migration since its own version was breaking.
 */

/** One migration: its SQL, and whether code of the schema version before it still works after it. */
export interface Migration {
  readonly sql: string;
  /**
   * True when it only adds (tables, indexes, nullable columns or columns with a default, routines
   * beside the old ones) and the previous version's code keeps working on the result; false when
   * it changes a routine's contract, drops or renames what older code uses, or changes what a
   * column means.
   */
  readonly additive: boolean;
}

/** A migration older code keeps working after. */
export function additive(sql: string): Migration {
  return { sql, additive: true };
}

/** A migration after which code of the versions before it must not run on the database. */
export function breaking(sql: string): Migration {
  return { sql, additive: false };
}

/**
 * The oldest schema version whose code may use a database migrated to `version`: the last
 * breaking migration up to it (older code works after an additive migration, and so on up the
 * chain of additive ones that follow).
 */
export function oldestUsableVersion(migrations: readonly Migration[], version: number): number {
  // Migration n sits at index n - 1.
  return migrations.slice(0, version).findLastIndex((migration) => !migration.additive) + 1;
}

/**
 * Throws, saying which schema version is needed and why, when code of `kitVersion` may not use a
 * database at `current`: one a newer kit migrated past a breaking change, or one whose newer kit
 * recorded nothing about which versions may use it (`oldestUsable` undefined).
 */
export function refuseUnlessUsable(
  storeName: string,
  current: number,
  oldestUsable: number | undefined,
  kitVersion: number,
): void {
  if (current <= kitVersion) return;
  if (oldestUsable === undefined) {
    throw new Error(
      `The database's verify kit ${storeName} schema is version ${current}, newer than this kit's ${kitVersion}: upgrade the kit.`,
    );
  }
  if (kitVersion >= oldestUsable) return;
  throw new Error(
    `The database's verify kit ${storeName} schema is version ${current}, and its migration ${oldestUsable} ` +
      `changed what code before it relies on, so only a kit whose ${storeName} schema is version ${oldestUsable} ` +
      `or newer may use it; this kit's is ${kitVersion} (rolled back past that breaking change): ` +
      `deploy a kit release with ${storeName} schema ${oldestUsable} or newer.`,
  );
}
