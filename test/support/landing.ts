/** A stand-in integrator site on `localhost` for hosted-page browser tests, and its handoff form. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { escapeHtml } from '../../emulator/hosted/views.ts';
import { closeServer, listen } from './listen.ts';

export interface Landing {
  origin: string;
  /** HTML served on GET /page. */
  page: string;
  /** Query strings that arrived on GET /verify/return, with the request headers the browser sent. */
  returns: Array<{ query: URLSearchParams; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

export async function startLanding(): Promise<Landing> {
  const server: Server = createServer();
  const landing: Landing = {
    origin: '',
    page: '',
    returns: [],
    close: () => closeServer(server),
  };
  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/verify/return') {
      landing.returns.push({ query: url.searchParams, headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Back at the site</h1>');
    } else if (url.pathname === '/page') {
      // A Lax cookie of the site's own, to show it never travels to the hosted page.
      const cookie = 'site_session=s3cr3t; SameSite=Lax; HttpOnly; Path=/';
      res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': cookie });
      res.end(landing.page);
    } else {
      res.writeHead(404).end();
    }
  });
  landing.origin = `http://localhost:${await listen(server)}`;
  return landing;
}

/** The integrator's frontend: a form that POSTs the handoff as `hx` to verifyUrl, optionally into a named frame. */
export function handoffForm(verifyUrl: string, handoff: string, target?: string): string {
  const targetAttr = target === undefined ? '' : ` target="${escapeHtml(target)}"`;
  const frame =
    target === undefined
      ? ''
      : `<iframe name="${escapeHtml(target)}" title="hosted page" width="400" height="400"></iframe>`;
  return `<!doctype html><html><body>
<form method="post" action="${escapeHtml(verifyUrl)}"${targetAttr}>
<input type="hidden" name="hx" value="${escapeHtml(handoff)}"><button type="submit">Verify my phone</button>
</form>${frame}</body></html>`;
}
