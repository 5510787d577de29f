/**
 * The service's own text (a refusal's `errorCode`) is quoted in what the kit logs and in the error
 * it hands the app: a service, or a proxy in front of it, refusing a create may quote the number it
 * was sent. That number is masked there, as everywhere but the form it was typed into.
 */
import { describe, expect, it } from 'vitest';
import { appOnStubService } from '../support/stub-service.ts';
import { USERS } from '../support/users.ts';

describe("a refusal whose errorCode quotes the user's number", () => {
  const startApp = appOnStubService();

  it('is logged, and handed to the app, with the number masked', async () => {
    // A service refusing the create, quoting the destination of the body it was sent.
    const app = await startApp(
      (req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const { destination } = JSON.parse(body) as { destination: string };
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ isSuccess: false, errorCode: `destination_refused: ${destination}` }));
        });
      },
      { clientId: 'acme', clientSecret: 'kit-secret-for-a-refusing-service' },
    );
    const alice = await app.agent().signIn('alice');
    expect((await alice.tryStart('grant_badge')).status).toBeGreaterThanOrEqual(400);

    const logged = app.logs.filter((line) => line.includes('destination_refused'));
    expect(logged.map((line) => (JSON.parse(line) as { serviceErrorCode?: unknown }).serviceErrorCode)).toEqual([
      'destination_refused: ••\u00a011',
    ]);
    const number = USERS.alice!.destination;
    for (const text of [...app.logs, ...app.errors]) expect(text).not.toContain(number.slice(2));
  });
});
