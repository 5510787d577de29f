/**
 * A number the kit reads as the user's is one its masking of texts masks whole: an app's error
 * quoting what the user typed (`req.body.phone`) is logged with the number masked, however it was
 * spelt. A spelling the masking would leave whole (marks heaped at an end, groups spread wide) is
 * not read as a number: the user is asked for it again, nothing is texted, nothing logged whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { describeError } from '../../middleware/logger.ts';
import { maskNumbersInText } from '../../middleware/numbers/mask-number.ts';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const UNMASKABLE = [
  '+447400123456-----',
  '07400123456-----',
  '+4---4---7---4---0---0--1--2--3--4--5--6',
  '0---7---4---0---0---1---2---3---4--5--6',
];
// Slashes after a number end it as a URL's path does (`/users/+4474…/`): masked, so read.
const READ = [
  '+447400123456',
  '07400 123456',
  '+44 (0)7400 123-456',
  '+447400123456----',
  '+447400123456/////',
  '(07400) 123 456',
];
const digitsLeft = (text: string) => text.replace(/\P{Nd}/gu, '');

describe('what the reader takes, the masking masks', () => {
  it.each(UNMASKABLE)('%j, which the masking would leave whole, is not read as a number', (typed) => {
    expect(digitsLeft(maskNumbersInText(`no account for ${typed}`))).toMatch(/\d{3}/);
    expect(readEnteredNumber(typed, 'GB')).toBeUndefined();
  });

  it.each(READ)('%j is read, and quoted in an error it is logged masked', (typed) => {
    expect(readEnteredNumber(typed, 'GB')?.e164).toBe('+447400123456');
    expect(digitsLeft(String(describeError(new Error(`no account for ${typed}`)).message))).not.toMatch(/\d{3}/);
  });
});

const addPhone: ActionDefinition<unknown> = {
  name: 'add_phone',
  operationSensitivity: 'normal',
  successPath: '/done/phone',
  destination: 'entered',
  proves: 'destination',
  prepare: (req) => {
    throw new Error(`no account may add ${(req.body as { phone: string }).phone}`);
  },
  fulfil: () => undefined,
};

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ kit: { actions: [addPhone], defaultCountry: 'GB' } });
});
afterAll(async () => {
  await app?.close();
});

it.each([
  ['+447400123456', 500],
  ['+447400123456-----', 422],
  ['+4---4---7---4---0---0--1--2--3--4--5--6', 422],
])('typed as %j, the start answers %i and no log line holds the number whole', async (typed, status) => {
  const before = app.logs.length;
  const user = await app.agent().signIn('alice');
  const answer = await user.tryStartWithNumber('add_phone', typed);
  expect(answer.status).toBe(status);
  expect(digitsLeft(app.logs.slice(before).join('\n'))).not.toContain('7400123456');
  expect((await app.emulator.control.sentMessages()).length).toBe(0);
});
