/**
 * Control calls the integration audit needs: the session a handoff was issued for (the handoff in
 * the body, never in a URL), and a tampered echo for one session (a compromised or buggy service).
 */
import type express from 'express';
import type { EmulatorContext } from '../context.ts';
import { sendError } from '../errors.ts';
import { returnLocation } from '../hosted/hosted-responses.ts';
import type { Session } from '../api/sessions.ts';

/** A session as the control API shows it: what a test needs to land on it, never its code or handoff. */
function sessionView(session: Session) {
  return {
    sessionId: session.id,
    status: session.status,
    ...(session.reason === undefined ? {} : { reason: session.reason }),
    state: session.state,
    userRef: session.userRef,
    returnUrl: session.returnUrl,
    returnLocation: returnLocation(session),
  };
}

/** The echo override of POST /sessions/:id/echo, or a message saying what is wrong. */
function parseEcho(body: unknown): { state?: string; userRef?: string } | string {
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const echo: { state?: string; userRef?: string } = {};
  for (const [name, value] of Object.entries(input)) {
    if (name !== 'state' && name !== 'userRef') return `Unknown echo field "${name}": send state and/or userRef.`;
    if (typeof value !== 'string' || value === '') return `${name} must be a non-empty string.`;
    echo[name] = value;
  }
  return Object.keys(echo).length === 0 ? 'Send state and/or userRef to echo instead of the stored ones.' : echo;
}

export function mountSessionTools(router: express.Router, context: EmulatorContext): void {
  router.post('/sessions/lookup', (req, res) => {
    const handoff: unknown = req.body?.handoff;
    const session = typeof handoff === 'string' ? context.sessions.byHandoff(handoff) : undefined;
    if (session === undefined) {
      sendError(res, 404, 'unknown_session', 'No session was issued this handoff (or it is older than 24 h).');
      return;
    }
    res.json(sessionView(session));
  });

  router.post('/sessions/:sessionId/echo', (req, res) => {
    const echo = parseEcho(req.body);
    if (typeof echo === 'string') {
      sendError(res, 400, 'invalid_request', echo);
      return;
    }
    const session = context.sessions.get(req.params.sessionId);
    if (session === undefined) {
      sendError(res, 404, 'unknown_session', 'No such session (or it is older than 24 h).');
      return;
    }
    session.echo = echo;
    res.json(sessionView(session));
  });
}
