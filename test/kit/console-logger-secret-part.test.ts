/**
 * The default logger's lines go to the sweep job's log beside its JSON lines. A ready client of the
 * app's own (its own HTTP code: the kit is never given the secret) may fail with a message quoting
 * part of the client secret it read from the environment (the start of it, a cut Authorization
 * header). The job's JSON lines hold no run of 8 characters of an environment secret: neither may
 * the logger's line, for the client secret as for the environment's other secrets.
 */
import { describe, expect, it } from 'vitest';
import { createConsoleLogger, describeError } from '../../middleware/logger.ts';

const SECRET = 'Vt4nQ8wLz2KpR7xMb9cYs3Hd';

/** Every run of 8 characters of `secret` the text holds. */
function runsOf(secret: string, text: string): string[] {
  const runs: string[] = [];
  for (let at = 0; at + 8 <= secret.length; at++)
    if (text.includes(secret.slice(at, at + 8))) runs.push(secret.slice(at, at + 8));
  return runs;
}

describe("the default logger's line, an error quoting part of an environment secret", () => {
  it.each([
    ['the start of the client secret', { VERIFY_CLIENT_SECRET: SECRET }, SECRET.slice(0, 14)],
    ['the middle of a database password', { DATABASE_PASSWORD: SECRET }, SECRET.slice(5, 17)],
  ])('%s: none of it, the rest of the message kept', (_kind, env, part) => {
    const lines: string[] = [];
    const logger = createConsoleLogger((_level, line) => lines.push(line), env);
    logger.warn({ err: describeError(new Error(`the service refused ${part} (401)`)) }, 'status check failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('the service refused');
    expect(lines[0]).toContain('(401)');
    expect(runsOf(SECRET, lines[0]!)).toEqual([]);
  });
});

it("the default logger's line, a cut Basic header of the client secret: at most its first two characters' worth", () => {
  const basic = Buffer.from(`my-client:${SECRET}`).toString('base64');
  const lines: string[] = [];
  const logger = createConsoleLogger((_level, line) => lines.push(line), { VERIFY_CLIENT_SECRET: SECRET });
  logger.warn({ err: describeError(new Error(`refused Basic ${basic.slice(0, 28)}`)) }, 'status check failed');
  // What encodes the secret's third character on is gone. What shows of "bXktY2xpZW50OlZ0"
  // ("my-client:Vt") depends on the other secrets this process remembers (a shared test worker's).
  expect(lines[0]).toMatch(/refused Basic [A-Za-z0-9+/]*\[redacted\]/);
  expect(runsOf(basic.slice(12), lines[0]!)).toEqual([]);
});
