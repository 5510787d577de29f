/**
 * What a kit test's agents saw (every URL they asked for or were sent to, every handoff and
 * handoff page they got), and the leak check over it and the app's logs and errors: the client
 * secret and the handoffs must appear in none of them.
 */
import { parseHandoffPage, type Exchange } from './agent.ts';
import type { TestApp } from './app.ts';

export interface Seen {
  urls: string[];
  handoffs: string[];
  bodies: string[];
}

export function newSeen(): Seen {
  return { urls: [], handoffs: [], bodies: [] };
}

/** An agent recorder that files each exchange's URL and Location, and the handoff of a handoff page, into `seen`. */
export function recordInto(seen: Seen): (exchange: Exchange) => void {
  return (exchange) => {
    seen.urls.push(exchange.url);
    const location = exchange.responseHeaders.location;
    if (location !== undefined) seen.urls.push(location);
    const handoffPage = exchange.status === 200 ? parseHandoffPage(exchange.responseBody) : undefined;
    if (handoffPage !== undefined) {
      seen.bodies.push(exchange.responseBody);
      seen.handoffs.push(handoffPage.handoff);
    }
  };
}

/** Where the secret (raw or inside Basic credentials) or any handoff seen appears in the app's URLs, logs and errors. */
export function leaks(app: TestApp, seen: Seen, extra: string[] = []): string[] {
  const secrets = [app.secret, Buffer.from(`${app.clientId}:${app.secret}`).toString('base64'), ...seen.handoffs];
  const haystacks: [string, string[]][] = [
    ['app request URLs', app.requestUrls],
    ['URLs and Locations seen by the user agent', seen.urls],
    ['kit log lines', app.logs],
    ['errors reaching the error handler', app.errors],
    ['emulator log lines', app.emulator.logLines],
    ['extra', extra],
  ];
  const found: string[] = [];
  for (const [where, lines] of haystacks) {
    for (const text of lines) {
      for (const secret of secrets)
        if (secret.length > 0 && text.includes(secret)) found.push(`${where}: ${text.slice(0, 120)}`);
    }
  }
  return found;
}
