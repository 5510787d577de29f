/**
 * The start's two writes on PostgreSQL: its attempt, and the record of the send of the text the
 * SMS pumping check counted (attachSend: its verification then counts under the send's keys and
 * hour). The start asks for both in one turn of the event loop, the send right after the attempt;
 * they then go in one statement, a round trip and a commit fewer than one each. Each still settles
 * as its own: when that statement fails, the attempt's caller gets its error and the send is
 * written by its own statement. A send no attempt takes in its turn (one written again later, or
 * one asked for while the attempt waits on the migrations) is written alone once the turn is over.
 */
import { query, type PostgresDb } from './postgres-query.ts';
import type { NewAttempt } from '../types.ts';

/** attachSend's values: session id, hour, the keys' dimensions and names (sorted). */
export type SendValues = [sessionId: string, hour: number, dimensions: string[], keys: string[]];

interface WaitingSend {
  values: SendValues;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface StartWrites {
  insertAttempt(attempt: NewAttempt): Promise<void>;
  attachSend(values: SendValues): Promise<void>;
}

/** The insert statement's values, in its column order. */
function insertValues(attempt: NewAttempt): unknown[] {
  return [
    attempt.state,
    attempt.sessionId,
    attempt.userRef,
    attempt.action,
    JSON.stringify(attempt.params),
    attempt.returnTo,
    attempt.sensitivity,
    attempt.platform,
    attempt.createdAt,
    attempt.nextCheckAt,
    attempt.destination,
    attempt.serviceUserRef ?? null,
    attempt.clientId ?? null,
  ];
}

export function startWrites(db: PostgresDb): StartWrites {
  /** Sends asked for in this turn, by session, until an attempt takes one or the turn ends. */
  const waiting = new Map<string, WaitingSend>();

  const writeAlone = (send: WaitingSend) => {
    query(db, 'attachSend', send.values).then(() => send.resolve(), send.reject);
  };

  return {
    attachSend(values) {
      const [sessionId] = values;
      // A second send of one session in one turn (written again while the first waits) goes alone.
      if (waiting.has(sessionId)) return query(db, 'attachSend', values).then(() => undefined);
      return new Promise<void>((resolve, reject) => {
        const send = { values, resolve, reject };
        waiting.set(sessionId, send);
        setImmediate(() => {
          if (waiting.get(sessionId) !== send) return;
          waiting.delete(sessionId);
          writeAlone(send);
        });
      });
    },
    async insertAttempt(attempt) {
      // Past this await, the send the start asks for right after its attempt is waiting.
      await db.ready;
      const send = waiting.get(attempt.sessionId);
      if (send === undefined) {
        await query(db, 'insert', insertValues(attempt));
        return;
      }
      waiting.delete(attempt.sessionId);
      const [, hour, dimensions, keys] = send.values;
      try {
        await query(db, 'insertWithSend', [...insertValues(attempt), hour, dimensions, keys]);
      } catch (error) {
        // Nothing of the statement was written: the text was sent all the same, so its send is.
        writeAlone(send);
        throw error;
      }
      send.resolve();
    },
  };
}
