/** How the PostgreSQL store names the routines it creates (listed in ROUTINES, postgres-sql.ts). */
import { createHash } from 'node:crypto';

/** A routine the store creates when it starts, if missing: its signature (to look it up) and its CREATE. */
export interface Routine {
  readonly name: string;
  readonly signature: string;
  readonly create: string;
}

/**
 * A routine named `prefix` and a hash of its whole definition (`definition`: its parameters,
 * result, volatility, settings and body, all that follows the name in CREATE FUNCTION). Kit
 * versions running side by side on one database then share a routine only when it is the same in
 * every part: one whose header alone changed (STABLE to VOLATILE, say) is another routine, and each
 * version calls its own. `argTypes` are its parameters' types, as to_regprocedure reads them.
 */
export function routine(prefix: string, argTypes: string, definition: string): Routine {
  const name = `${prefix}_${createHash('sha256').update(definition).digest('hex').slice(0, 16)}`;
  return { name, signature: `${name}(${argTypes})`, create: `CREATE FUNCTION ${name}${definition}` };
}
