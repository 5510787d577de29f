/** One app on a store, shared by a describe's tests: what the SMS pumping suites start on each store. */
import { afterAll, beforeAll } from 'vitest';
import type { StoreOptions } from './app-stores.ts';
import { startTestApp, type TestAppOptions, type TestApp } from './app.ts';

/**
 * Starts the app with `kit` on the store before the describe's tests (then calls `adjust`) and
 * closes it after them: `app()` reads it.
 */
export function appForTests(
  storeOptions: StoreOptions,
  kit: TestAppOptions['kit'],
  adjust?: (app: TestApp) => void,
): () => TestApp {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp({ ...(await storeOptions()), kit });
    adjust?.(app);
  });
  afterAll(async () => {
    await app?.close();
  });
  return () => {
    if (app === undefined) throw new Error('the app starts before the tests');
    return app;
  };
}
