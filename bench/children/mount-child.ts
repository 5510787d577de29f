/**
 * Diagnostic for bench/micro/mount-cost.ts: three servers in one process with the bench apps' middleware
 * (helmet + express-session) and the same trivial 303 handler, placed (a) on the app itself,
 * (b) in an express() sub-application mounted with app.use(sub) — how the kit's router is built —
 * and (c) in an express.Router(). Also (d): a route of the host app declared AFTER app.use(sub),
 * i.e. an integrator's own route behind the kit's router.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import express, { type RequestHandler } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import { serve } from '../ipc.ts';
import { listen } from '../listen.ts';

const handler: RequestHandler = (_req, res) => {
  res.set('Cache-Control', 'no-store');
  res.redirect(303, '/done');
};

function host(): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(
    session({ name: 'bench_sid', secret: randomBytes(16).toString('hex'), resave: false, saveUninitialized: false }),
  );
  return app;
}

const apps: Record<string, express.Express> = {};
apps.direct = host();
apps.direct.get('/verify/return', handler);

apps.subapp = host();
const sub = express();
sub.disable('x-powered-by');
sub.get('/verify/return', handler);
apps.subapp.use(sub);

apps.router = host();
const router = express.Router();
router.get('/verify/return', handler);
apps.router.use(router);

apps.behindSubapp = host();
const sub2 = express();
sub2.disable('x-powered-by');
sub2.get('/verify/return', handler);
apps.behindSubapp.use(sub2);
apps.behindSubapp.get('/own', handler);

const ports: Record<string, number> = {};
for (const [name, app] of Object.entries(apps)) {
  const server = createServer(app);
  ports[name] = await listen(server);
}

serve({ ports: () => ports, cpu: () => process.cpuUsage() });
