/**
 * The demo's operator page (GET /operator/pumping) over real HTTP, with texts sent through the
 * emulator: the counts per country appear in the chart and in its table, an operator's block made
 * with the page's form shows among the rules that trip, the start it refuses appears among the
 * decisions with its number masked, and no full number appears anywhere on the page (on SQLite
 * and on PostgreSQL). Signed-out visitors are sent to sign in; a signed-in user who is not an
 * operator gets 403 for the page and its forms; a forged or malformed form writes nothing; with the
 * kit's pumping rules off the page says so.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { html as escapeHtml } from 'hosted-sms-verify-kit';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoApp } from '../../demo-app/app.ts';
import { DEMO_TEXTS } from '../../demo-app/i18n.ts';
import { Agent, type Answer } from '../support/agent.ts';
import { startStack, type Stack } from '../support/demo-stack.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { demoSite } from '../support/security-stack.ts';
import { DEMO_USERS } from '../support/users.ts';
import { changePhoneAfterStepUp } from './change-phone-start.ts';

const en = DEMO_TEXTS.en.operator;
const fr = DEMO_TEXTS.fr.operator;
const FRENCH_NUMBER = '+33612345678';
const FRENCH_BLOCK = '+33612345';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

/** The cells of the table row that starts with `opening` (e.g. `<tr data-country="US" data-days-ago="0">`). */
function rowCells(html: string, opening: string): string[] | undefined {
  const start = html.indexOf(opening);
  if (start === -1) return undefined;
  const row = html.slice(start, html.indexOf('</tr>', start));
  return [...row.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) => cell[1]!.replace(/<[^>]+>/g, ''));
}

/** The chart's bar for a country and day: its sent and verified counts as drawn. */
function chartBar(html: string, country: string, daysAgo: number): { sent: number; verified: number } | undefined {
  const svg = /<svg class="chart"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
  const group = new RegExp(`<g data-country="${country}">([\\s\\S]*?)\\n</g>`).exec(svg)?.[1] ?? '';
  const bar = new RegExp(`<g data-days-ago="${daysAgo}" data-sent="(\\d+)" data-verified="(\\d+)">`).exec(group);
  return bar === null ? undefined : { sent: Number(bar[1]), verified: Number(bar[2]) };
}

/** A text as the page writes it (escaped by the kit's `html` tag). */
const shown = (text: string): string => escapeHtml`${text}`.value;

/** The demo's own form token (the sign-out form's, the same per session). */
function siteToken(html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
}

function postOperator(agent: Agent, fields: Record<string, string>): Promise<Answer> {
  return agent.postForm('/operator/pumping', fields, { origin: agent.origin, 'sec-fetch-site': 'same-origin' });
}

describe('the operator page: who may use it', () => {
  it('is for signed-in users only: GET and POST send a signed-out visitor to sign in, and write nothing', async () => {
    const visitor = new Agent(demoSite(stack));
    const page = await visitor.request('/operator/pumping');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/signin');
    const post = await postOperator(visitor, { act: 'block', target: 'NG' });
    expect(post.status).toBe(303);
    expect(post.location).toBe('/signin');
    expect(await stack.demo.kit.pumping.rules()).toEqual([]);
  });

  it('is for operators only: a signed-in user who is not one gets 403 (the error page, in their language) for the page and each of its forms, the rules unchanged, and no link to it', async () => {
    const rulesBefore = await stack.demo.kit.pumping.rules();
    for (const name of ['bob', 'chen'] as const) {
      const user = await new Agent(demoSite(stack)).signIn(name);
      const home = await user.request('/');
      const token = siteToken(home.body);
      for (const [language, acceptLanguage] of [
        ['en', 'en-GB'],
        ['fr', 'fr-FR'],
      ] as const) {
        const headers = { 'accept-language': acceptLanguage };
        const page = await user.request('/operator/pumping', { headers });
        expect(page.status, `GET as ${name} [${language}]`).toBe(403);
        const refusal = shown(DEMO_TEXTS[language].errors.operatorOnly.title);
        expect(page.body).toContain(`<html lang="${language}">`);
        expect(page.body).toContain(refusal);
        // None of the page's data: no counts, no decisions (addresses, userRefs), no form.
        for (const id of ['texts-table', 'tripped-table', 'decisions-table', 'act-heading']) {
          expect(page.body).not.toContain(`id="${id}"`);
        }
        for (const act of ['block', 'release', 'clear']) {
          const post = await user.postForm(
            '/operator/pumping',
            { _csrf: token, act, target: 'NG' },
            { origin: user.origin, 'sec-fetch-site': 'same-origin', ...headers },
          );
          expect(post.status, `${act} as ${name} [${language}]`).toBe(403);
          expect(post.body).toContain(refusal);
        }
      }
      expect(home.body).not.toContain('href="/operator/pumping"');
    }
    expect(await stack.demo.kit.pumping.rules()).toEqual(rulesBefore);

    // The operator (Alice, the demo's default) has the link and the page.
    const alice = await new Agent(demoSite(stack)).signIn('alice');
    expect((await alice.request('/')).body).toContain('href="/operator/pumping"');
    expect((await alice.request('/operator/pumping')).status).toBe(200);
  });

  it('refuses a forged form (403) and a malformed target (400 with the reason), writing nothing', async () => {
    const alice = await new Agent(demoSite(stack)).signIn('alice');
    const rulesBefore = await stack.demo.kit.pumping.rules();
    const token = siteToken((await alice.request('/operator/pumping')).body);
    const forged = await postOperator(alice, { act: 'block', target: 'NG' });
    expect(forged.status).toBe(403);
    const crossSite = await alice.postForm(
      '/operator/pumping',
      { _csrf: token, act: 'block', target: 'NG' },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(crossSite.status).toBe(403);
    for (const target of ['Nigeria', '+33 61x', '', '+1']) {
      const refused = await postOperator(alice, { _csrf: token, act: 'block', target });
      expect(refused.status, target).toBe(400);
      expect(refused.body).toContain(shown(en.invalidTarget));
    }
    const badAct = await postOperator(alice, { _csrf: token, act: 'erase', target: 'NG' });
    expect(badAct.status).toBe(400);
    expect(badAct.body).toContain(shown(en.invalidAct));
    expect(await stack.demo.kit.pumping.rules()).toEqual(rulesBefore);
  });

  it('takes a number block as the page shows it (copied with its masked digits), and blocks and clears that block', async () => {
    const alice = await new Agent(demoSite(stack)).signIn('alice');
    const token = siteToken((await alice.request('/operator/pumping')).body);
    const blocked = await postOperator(alice, { _csrf: token, act: 'block', target: `${FRENCH_BLOCK}•••` });
    expect(blocked.status).toBe(303);
    expect((await stack.demo.kit.pumping.rules()).map((rule) => [rule.dimension, rule.key])).toEqual([
      ['block', FRENCH_BLOCK],
    ]);
    const cleared = await postOperator(alice, { _csrf: token, act: 'clear', target: ` ${FRENCH_BLOCK}••• ` });
    expect(cleared.location).toBe('/operator/pumping?done=cleared');
    expect(await stack.demo.kit.pumping.rules()).toEqual([]);
  });
});

// The page's reads on both of the kit's stores (the demo's DATABASE_PATH or DATABASE_URL).
for (const store of ['SQLite', 'PostgreSQL'] as const) {
  describe.skipIf(store === 'PostgreSQL' && postgresUnavailable !== undefined)(`the operator page on ${store}`, () => {
    let on: Stack;
    let database: TestDatabase | undefined;
    beforeAll(async () => {
      if (store === 'PostgreSQL') database = await createTestDatabase({ max: 4 });
      on = await startStack(database === undefined ? {} : { databaseUrl: database.url });
    });
    afterAll(async () => {
      await on?.close();
      await database?.drop();
    });

    it('shows texts per country (chart and table), the tripped block, and the refused start with its number masked', async () => {
      const alice = await new Agent(demoSite(on)).signIn('alice');
      // Three texts to Alice's number: one confirmation verified and landed, one never verified, and
      // the code she entered to confirm it's her before changing her number; two to a French number
      // (the kept change, then one more), never verified.
      // The demo's 555 numbers belong to no country's ranges: the kit counts them under ZZ.
      const verified = await alice.start('confirm_phone');
      expect((await on.control.complete(verified.sessionId, { outcome: 'verified' })).status).toBe(200);
      expect((await alice.landFor(verified.sessionId, verified.state)).status).toBe(303);
      await alice.start('confirm_phone');
      await changePhoneAfterStepUp(alice, FRENCH_NUMBER);
      await alice.startWithNumber('change_phone', FRENCH_NUMBER);
      expect((await on.control.outbox()).map((m) => m.to)).toEqual([
        DEMO_USERS.alice.phone,
        DEMO_USERS.alice.phone,
        DEMO_USERS.alice.phone,
        FRENCH_NUMBER,
        FRENCH_NUMBER,
      ]);

      // The page's form blocks the French number's block; the next start to it is refused, and sends nothing.
      const before = await alice.request('/operator/pumping');
      expect(before.status).toBe(200);
      expect(before.headers.get('cache-control')).toBe('no-store');
      const blocked = await postOperator(alice, { _csrf: siteToken(before.body), act: 'block', target: FRENCH_BLOCK });
      expect(blocked.status).toBe(303);
      expect(blocked.location).toBe('/operator/pumping?done=block');
      expect((await alice.tryStartWithNumber('change_phone', FRENCH_NUMBER)).status).toBe(429);
      expect((await on.control.outbox()).length).toBe(5);

      const page = await alice.request('/operator/pumping?done=block');
      expect(page.status).toBe(200);
      const html = page.body;
      expect(html).toContain(shown(en.done.block));

      // The table: one row per country and day, sent, verified, never verified.
      expect(rowCells(html, '<tr data-country="ZZ" data-days-ago="0">')).toEqual([
        expect.stringMatching(/\(ZZ\)$/),
        en.dayLabel(0),
        '3',
        '2',
        '1',
      ]);
      expect(rowCells(html, '<tr data-country="FR" data-days-ago="0">')).toEqual([
        'France (FR)',
        en.dayLabel(0),
        '2',
        '0',
        '2',
      ]);
      // The chart draws the same numbers.
      expect(chartBar(html, 'ZZ', 0)).toEqual({ sent: 3, verified: 2 });
      expect(chartBar(html, 'FR', 0)).toEqual({ sent: 2, verified: 0 });

      // The operator's block trips its key, shown with its counts against the thresholds.
      const tripped = rowCells(html, `<tr data-dimension="block" data-key="${FRENCH_BLOCK}•••">`);
      expect(tripped).toEqual([
        en.kinds.block,
        `${FRENCH_BLOCK}•••`,
        expect.any(String),
        expect.stringMatching(/^\d+(\.\d)? of \d+(\.\d)?$/),
        expect.stringMatching(/^2 of \d+(\.\d)?$/),
        en.rules.block,
      ]);

      // The refused start, with its rule; the number only as its masked block.
      const decision = rowCells(html, '<tr data-decision="refused">');
      expect(decision?.slice(1)).toEqual([
        en.decisions.refused,
        'blocked',
        'FR',
        `${FRENCH_BLOCK}•••`,
        expect.any(String),
        DEMO_USERS.alice.id,
      ]);
      for (const full of [
        FRENCH_NUMBER,
        FRENCH_NUMBER.slice(1),
        DEMO_USERS.alice.phone,
        DEMO_USERS.alice.phone.slice(1),
      ]) {
        expect(html).not.toContain(full);
      }
      expect(html).not.toContain(on.clientSecret);

      // The same page in French.
      const french = await alice.request('/operator/pumping', { headers: { 'accept-language': 'fr-FR' } });
      expect(french.body).toContain('<html lang="fr">');
      expect(french.body).toContain(shown(fr.chartTitle));
      expect(rowCells(french.body, '<tr data-country="FR" data-days-ago="0">')?.slice(0, 2)).toEqual([
        'France (FR)',
        fr.dayLabel(0),
      ]);
      expect(rowCells(french.body, '<tr data-decision="refused">')?.[1]).toBe(fr.decisions.refused);

      // Removing the block through the form.
      const cleared = await postOperator(alice, { _csrf: siteToken(html), act: 'clear', target: FRENCH_BLOCK });
      expect(cleared.location).toBe('/operator/pumping?done=cleared');
      expect(await on.demo.kit.pumping.rules()).toEqual([]);
    });
  });
}

describe('the operator page with the kit’s pumping rules off', () => {
  it('says so in a sentence, in both languages, and its form answers 409 (to an operator named in `operators`)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-pumping-off-'));
    const demo = createDemoApp({
      verifyBaseUrl: stack.emulatorUrl,
      clientId: 'demo-client',
      clientSecret: 'irrelevant-here',
      returnUrl: 'http://localhost:3999/verify/return',
      databasePath: join(dir, 'demo.sqlite'),
      sessionSecret: 'another-long-session-secret-value',
      trustProxy: false,
      pumping: { mode: 'off' },
      operators: ['usr_chen'],
    });
    try {
      const agent = request.agent(demo.app);
      const token = /name="_csrf" value="([^"]+)"/.exec((await agent.get('/signin')).text)![1]!;
      expect((await agent.post('/signin').type('form').send({ _csrf: token, userId: 'usr_chen' })).status).toBe(303);
      const page = await agent.get('/operator/pumping');
      expect(page.status).toBe(200);
      expect(page.text).toContain(shown(en.off));
      expect(page.text).not.toContain('id="texts-table"');
      const french = await agent.get('/operator/pumping').set('Accept-Language', 'fr');
      expect(french.text).toContain(shown(fr.off));
      const siteCsrf = siteToken(page.text);
      const post = await agent
        .post('/operator/pumping')
        .type('form')
        .send({ _csrf: siteCsrf, act: 'block', target: 'NG' });
      expect(post.status).toBe(409);
      expect(post.text).toContain(shown(en.off));
    } finally {
      await demo.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
