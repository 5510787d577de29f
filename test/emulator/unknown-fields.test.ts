/**
 * The spec shows no full field list of the create answer ("any other response fields: not shown")
 * nor of the status read ("the complete field list: not shown"). The emulator answers only the
 * fields it names, and a test can add one no client knows (`injectFaults({ unknownFields: true })`),
 * so an integration that refuses an answer with a field it does not know is found here rather than
 * against the service.
 */
import { describe, expect, it } from 'vitest';
import {
  WEB_CLIENT,
  OTHER_CLIENT,
  createSession,
  newSession,
  readSession,
  useTestEmulator,
} from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });
const CREATE_FIELDS = ['binding', 'expiresInSeconds', 'handoff', 'isSuccess', 'sessionId', 'verifyUrl'];
const STATUS_FIELDS = ['assertionExchanged', 'isSuccess', 'state', 'status', 'userRef'];

const unknownOf = (body: object, known: string[]) => Object.keys(body).filter((key) => !known.includes(key));

describe('fields the spec does not list', () => {
  it('by default the create answer and the status read carry only the fields the emulator names', async () => {
    const created = await createSession(emulator.url, WEB_CLIENT);
    expect(Object.keys(created.body).sort()).toEqual(CREATE_FIELDS);
    const read = await readSession(emulator.url, WEB_CLIENT, created.body.sessionId as string);
    expect(Object.keys(read.body).sort()).toEqual(STATUS_FIELDS);
  });

  it('with unknownFields, the create answer and every status read carry a field no client knows', async () => {
    expect((await emulator.control.injectFaults({ unknownFields: true })).unknownFields).toBe(true);
    const created = await createSession(emulator.url, WEB_CLIENT);
    expect(created.status).toBe(200);
    expect(unknownOf(created.body, CREATE_FIELDS)).toHaveLength(1);
    expect(created.body).toMatchObject({ isSuccess: true, expiresInSeconds: 120, binding: 'form_post' });
    const sessionId = created.body.sessionId as string;
    const own = await readSession(emulator.url, WEB_CLIENT, sessionId);
    expect(unknownOf(own.body, STATUS_FIELDS)).toHaveLength(1);
    expect(own.body).toMatchObject({ isSuccess: true, status: 'pending', userRef: 'user-42' });
    const foreign = await readSession(emulator.url, OTHER_CLIENT, sessionId);
    const unknownId = await readSession(emulator.url, WEB_CLIENT, 'ses_no_such_session');
    expect(foreign.body).toEqual(unknownId.body); // another client's id still reads as an unknown one
    expect(unknownOf(unknownId.body, STATUS_FIELDS)).toHaveLength(1);
  });

  it('reset turns it off, and a value that is not a boolean is refused', async () => {
    await emulator.control.injectFaults({ unknownFields: true });
    await emulator.control.reset();
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const read = await readSession(emulator.url, WEB_CLIENT, sessionId);
    expect(Object.keys(read.body).sort()).toEqual(STATUS_FIELDS);
    expect((await emulator.control.setFaults({ unknownFields: 'yes' })).status).toBe(400);
  });
});
