/**
 * One integrator app in its own process: `kit` (express + express-session + helmet + the kit) or
 * `baseline` (the same express + express-session + helmet, with a minimal hand-written start and
 * landing). Both use a file SQLite database (WAL, synchronous=NORMAL), or with `databaseUrl` a
 * PostgreSQL database (the kit's PostgreSQL store; the baseline on plain node-postgres), an undici
 * keep-alive Pool to the emulator, a silent logger, and the same action: one INSERT into
 * bench_grants committed with the attempt's mark.
 *
 * The process listens first (port 0) so the orchestrator can register the app's returnUrl with the
 * emulator, then `configure` builds the app.
 */
import { createServer, type Server } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import * as thisKit from '../../middleware/index.ts';
import type { ConfigureArgs, SeedAttempt } from '../common.ts';
import { serve } from '../ipc.ts';
import { closeServer, listen } from '../listen.ts';
import { configureBaseline } from './app/baseline.ts';
import { configureKit, type KitModule } from './app/kit.ts';
import { recordLandingTimes } from './app/landing-spans.ts';
import type { ConfiguredApp } from './app/shared.ts';

const mode = process.argv[2];
if (mode !== 'kit' && mode !== 'baseline') throw new Error('usage: app-child.ts kit|baseline');
// BENCH_BASELINE_KIT_DIR=<dir holding another version's middleware/> (e.g. `git archive main middleware`
// unpacked, with node_modules linked): the "baseline" side runs THAT kit, the same way, so two kit versions
// are compared in one interleaved run, under the same load (two separate runs on a shared machine differ
// more than most single changes do).
const otherKitDir = process.env.BENCH_BASELINE_KIT_DIR;
const kitModule: KitModule =
  otherKitDir !== undefined && mode === 'baseline' ? await import(`${otherKitDir}/middleware/index.ts`) : thisKit;

const server: Server = createServer();
const port = await listen(server);

let configured: ConfiguredApp | undefined;
let landingTimes: ReturnType<typeof recordLandingTimes> | undefined;

serve(
  {
    port: () => ({ port }),
    configure(args: ConfigureArgs) {
      configured =
        mode === 'kit' || otherKitDir !== undefined ? configureKit(kitModule, args) : configureBaseline(args);
      configured.app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
        res.status(500).send(error instanceof Error ? error.name : 'error');
      });
      server.on('request', configured.app);
      return { ok: true };
    },
    async seed(args: { attempts: SeedAttempt[] }) {
      if (configured === undefined) throw new Error('not configured');
      await configured.seed(args.attempts);
      return { inserted: args.attempts.length };
    },
    counts: () => configured?.counts() ?? { grants: 0, fulfilled: 0 },
    /** From now on, record where each landing's time went (the kit's spans). */
    recordLandingTimes() {
      landingTimes ??= recordLandingTimes();
      return { ok: true };
    },
    /** The landings finished since the last call, each with its time by part. */
    landingTimes: () => landingTimes?.take() ?? [],
    cpu: () => process.cpuUsage(),
    memory: () => process.memoryUsage(),
  },
  async () => {
    await closeServer(server);
    await configured?.kit?.close();
    await configured?.upstream?.close();
    await configured?.store?.close();
    await configured?.pgPool?.end();
    if (configured?.db?.open) configured.db.close();
  },
);
