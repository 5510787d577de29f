/**
 * A request as a browser sends it to a `*.localhost` host (the emulator's hosted page on
 * `verify.localhost`): browsers resolve such names to loopback themselves and Node does not, so it
 * is made to 127.0.0.1 with the page's own name in the Host header. The emulator's hosted page
 * answers on its own host only, as the service's does (`verifyUrl` is used as returned). Other
 * URLs go through fetch. No redirect is followed.
 */
import { request as httpRequest } from 'node:http';

export interface LoopbackInit {
  method: string;
  headers?: Headers | Record<string, string>;
  body?: string;
}

/** Statuses whose answer has no body (a Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

export function loopbackFetch(url: string | URL, init: LoopbackInit): Promise<Response> {
  const target = new URL(url);
  if (target.protocol !== 'http:' || !target.hostname.endsWith('.localhost')) {
    return fetch(target, { ...init, redirect: 'manual' });
  }
  const headers: Record<string, string> = { host: target.host };
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port === '' ? 80 : Number(target.port),
        method: init.method,
        path: `${target.pathname}${target.search}`,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const answered = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
            answered.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
          }
          const status = res.statusCode ?? 502;
          resolve(new Response(NO_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: answered }));
        });
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
