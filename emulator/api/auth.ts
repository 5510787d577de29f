/** HTTP Basic auth for POST /session and GET /session/{id}: client_id as user, issued secret as password. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { EmulatorClient } from '../config/config.ts';
import { sendError } from '../errors.ts';

// Compared as SHA-256 digests so lengths match and timing says nothing about the secret.
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function authenticate(
  header: string | undefined,
  clients: readonly EmulatorClient[],
): EmulatorClient | undefined {
  // One or more spaces after the scheme (RFC 7235's credentials grammar).
  const match = /^Basic +([A-Za-z0-9+/]+=*)$/i.exec(header?.trim() ?? '');
  if (!match?.[1]) return undefined;
  const bytes = Buffer.from(match[1], 'base64');
  // Only BASE64(client_id:secret) itself: node decodes a token without its padding, with extra "="
  // or with stray low bits too, which a strict service refuses.
  if (bytes.toString('base64') !== match[1]) return undefined;
  const decoded = bytes.toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const clientId = decoded.slice(0, colon);
  const secret = decoded.slice(colon + 1);
  const client = clients.find((candidate) => candidate.clientId === clientId);
  // An unknown client still costs one comparison, so the answer time does not reveal which ids exist.
  const ok = sameSecret(secret, client?.secret ?? 'no-such-client');
  return ok && client !== undefined ? client : undefined;
}

/** Middleware: 401 `unauthorized` unless the request carries a registered client's credentials. */
export function requireClient(clients: readonly EmulatorClient[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const client = authenticate(req.get('authorization'), clients);
    if (client === undefined) {
      res.set('WWW-Authenticate', 'Basic realm="hosted-verify", charset="UTF-8"');
      sendError(res, 401, 'unauthorized', 'Missing or invalid client credentials (HTTP Basic: client_id and secret).');
      return;
    }
    res.locals.client = client;
    next();
  };
}

export function clientOf(res: Response): EmulatorClient {
  return res.locals.client as EmulatorClient;
}
