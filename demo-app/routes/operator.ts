/**
 * The operator page (GET /operator/pumping) and its form (POST): SMS pumping read through the
 * kit's `kit.pumping`. For the demo's operators alone (operators.ts): anyone else signed in gets
 * 403 for the page and its form, before anything is read or written.
 */
import express from 'express';
import type { Request, Response } from 'express';
import { isKitError, type PumpingTarget, type VerificationKit } from 'hosted-sms-verify-kit';
import { demoCsrfValid } from '../csrf.ts';
import type { DemoReads } from '../data.ts';
import type { DemoUser } from '../db.ts';
import { demoTexts } from '../i18n.ts';
import { isOperator } from '../operators.ts';
import { errorPage } from '../views/errors.ts';
import { operatorPage, type PumpingView } from '../views/operator.ts';
import { viewer, withUser } from './signed-in.ts';

/** The days the chart and its table cover (the thresholds read 14 days of history). */
const DAYS = 14;
const ACTS = ['block', 'release', 'clear'] as const;
type Act = (typeof ACTS)[number];

async function readPumping(kit: VerificationKit<unknown>): Promise<PumpingView> {
  const [counts, tripped, decisions, rules] = await Promise.all([
    kit.pumping.countsByDay({ by: 'country', days: DAYS }),
    kit.pumping.tripped(),
    kit.pumping.decisions({ hours: 24, limit: 50 }),
    kit.pumping.rules(),
  ]);
  return { days: DAYS, counts, tripped, decisions, rules };
}

/**
 * "NG" or "ng" is a country; "+33 612 345" a number block, also as the page shows one
 * ("+33612345•••", copied from its tables); anything else is refused.
 */
export function targetOf(typed: unknown): PumpingTarget | undefined {
  if (typeof typed !== 'string') return undefined;
  const value = typed.replace(/[\s.-]/g, '').replace(/(?<=\d)•••$/u, '');
  if (/^[A-Za-z]{2}$/.test(value)) return { country: value.toUpperCase() };
  if (/^\+\d{2,14}$/.test(value)) return { block: value };
  return undefined;
}

type Render = (
  req: Request,
  res: Response,
  user: DemoUser,
  extra?: { notice?: string; error?: string; target?: string },
) => Promise<void>;

/** The form: a block, release or removal, then back to the page (303); a bad form gets the page with the reason. */
async function applyForm(
  kit: VerificationKit<unknown>,
  render: Render,
  req: Request,
  res: Response,
  user: DemoUser,
): Promise<void> {
  const t = demoTexts(req);
  const body = req.body as Record<string, unknown>;
  const typed = typeof body.target === 'string' ? body.target.slice(0, 40) : '';
  const act = ACTS.find((a) => a === body.act) as Act | undefined;
  const target = targetOf(body.target);
  if (act === undefined || target === undefined) {
    res.status(400);
    await render(req, res, user, {
      error: act === undefined ? t.operator.invalidAct : t.operator.invalidTarget,
      target: typed,
    });
    return;
  }
  try {
    if (act === 'clear') {
      const found = await kit.pumping.clear(target);
      res.redirect(303, `/operator/pumping?done=${found ? 'cleared' : 'nothing'}`);
      return;
    }
    await (act === 'block' ? kit.pumping.block(target) : kit.pumping.release(target));
    res.redirect(303, `/operator/pumping?done=${act}`);
  } catch (error) {
    // The kit refuses a malformed key before writing anything: the form again, with the reason.
    if (!isKitError(error, 'invalid_options')) throw error;
    res.status(400);
    await render(req, res, user, { error: t.operator.invalidTarget, target: typed });
  }
}

/** The operators' pages: a signed-in user who is not one gets the demo's 403 page, and nothing runs. */
function withOperator(queries: DemoReads, handler: (req: Request, res: Response, user: DemoUser) => Promise<void>) {
  return withUser(queries, async (req, res, user) => {
    if (!isOperator(req, user)) {
      const t = demoTexts(req);
      res.status(403).send(errorPage({ t, status: 403, ...t.errors.operatorOnly, viewer: viewer(req, user) }));
      return;
    }
    await handler(req, res, user);
  });
}

export function mountOperatorPages(
  app: express.Express,
  queries: DemoReads,
  kit: VerificationKit<unknown>,
  options: { pumpingOff: boolean },
): void {
  const render: Render = async (req, res, user, extra = {}) => {
    const view = options.pumpingOff ? undefined : await readPumping(kit);
    res.send(operatorPage({ t: demoTexts(req), viewer: viewer(req, user), view, ...extra }));
  };

  app.get(
    '/operator/pumping',
    withOperator(queries, async (req, res, user) => {
      const o = demoTexts(req).operator;
      const done = req.query.done;
      const notice =
        done === 'block' || done === 'release'
          ? o.done[done]
          : done === 'cleared' || done === 'nothing'
            ? o.cleared(done === 'cleared')
            : undefined;
      await render(req, res, user, notice === undefined ? {} : { notice });
    }),
  );

  app.post(
    '/operator/pumping',
    express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 }),
    withOperator(queries, async (req, res, user) => {
      const t = demoTexts(req);
      if (!demoCsrfValid(req)) {
        res.status(403).send(errorPage({ t, status: 403, ...t.errors.badRequest, viewer: viewer(req, user) }));
        return;
      }
      if (options.pumpingOff) {
        // Nothing to block or release: the page, which says the rules are off.
        res.status(409);
        await render(req, res, user);
        return;
      }
      await applyForm(kit, render, req, res, user);
    }),
  );
}
