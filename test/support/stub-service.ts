/** A stand-in for the service that answers as a test says, and the app calling it: both closed after each test. */
import { createServer, type RequestListener, type Server } from 'node:http';
import { afterEach } from 'vitest';
import { startTestApp, type TestApp } from './app.ts';
import { closeServer, listen } from './listen.ts';

export type StartOnStubService = (
  answer: RequestListener,
  credentials: { clientId: string; clientSecret: string },
) => Promise<TestApp>;

/** Call inside a describe: the function it returns starts the stub service (answering with `answer`) and an app on it. */
export function appOnStubService(): StartOnStubService {
  let app: TestApp | undefined;
  let service: Server | undefined;
  afterEach(async () => {
    await app?.close();
    if (service !== undefined) await closeServer(service);
    app = undefined;
    service = undefined;
  });
  return async (answer, credentials) => {
    service = createServer(answer);
    const baseUrl = `http://127.0.0.1:${await listen(service)}`;
    app = await startTestApp({ service: async () => ({ baseUrl, ...credentials }) });
    return app;
  };
}
