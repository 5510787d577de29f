/**
 * A script's request to a guarded page from another site, with an Origin the app allows
 * (`csrf.allowedOrigins`), as docs/step-up.md says: from a sibling subdomain (`Sec-Fetch-Site:
 * same-site`) it is answered as this site's own (the JSON challenge, a request kept); from another
 * site (`cross-site`) it is refused (403) whatever its Origin, and keeps nothing. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { guardedRoutes, SCOPES, type Ran } from '../support/step-up.ts';

const SIBLING = 'https://admin.app.example';
const PARTNER = 'https://partner.example';

describeEachAppStore('a guarded page fetched by a script of an allowed origin', (_store, storeOptions) => {
  const ran: Ran[] = [];
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES], csrf: { allowedOrigins: [SIBLING, PARTNER] } },
      ownRoutes: guardedRoutes(ran),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const keptCount = async (userRef: string) =>
    (await app.query('SELECT intent_id FROM verify_kit_intents WHERE user_ref = $1', [userRef])).length;

  it('is answered as this site’s from a sibling subdomain, and refused from another site whatever its Origin', async () => {
    const user = await app.agent().signIn('allowed-origins');
    const fetched = (origin: string, site: string) =>
      user.request('/export', { headers: { accept: 'application/json', origin, 'sec-fetch-site': site } });
    const sibling = await fetched(SIBLING, 'same-site');
    expect(sibling.status).toBe(401);
    expect(((await sibling.json()) as { error: string }).error).toBe('verification_required');
    expect(await keptCount('user-allowed-origins')).toBe(1);
    const partner = await fetched(PARTNER, 'cross-site');
    expect(partner.status).toBe(403);
    expect(((await partner.json()) as { error: string }).error).toBe('csrf_failed');
    expect(await keptCount('user-allowed-origins')).toBe(1);
  });
});
