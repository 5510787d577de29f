/**
 * `npm run demo`: the demo on http://localhost:PORT, the bundled emulator on 127.0.0.1 (a
 * different site, so cookies behave as in production) unless VERIFY_BASE_URL is set, and the
 * sweep worker in-process unless SWEEP_WORKER=off. SIGTERM/SIGINT stop the worker, then close the
 * servers and the database. Several instances: docs/demo.md "Several instances".
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { maskDestination } from 'hosted-sms-verify-kit';
import { startEmulator, type RunningEmulator } from 'hosted-sms-verify-kit/testing';
import { createDemoApp } from './app.ts';
import { checkReturnUrlServesDemo, ConfigError, describeConfig, loadConfig, type DemoConfig } from './config.ts';
import { withoutPassword } from './data.ts';
import { SEEDED_USERS } from './db.ts';

type Fields = Record<string, unknown>;
const line = (level: string) => (obj: Fields, msg?: string) =>
  console.log(JSON.stringify({ level, time: new Date().toISOString(), msg, ...obj }));
const logger = { info: line('info'), warn: line('warn'), error: line('error') };

async function main(): Promise<void> {
  const config = loadConfig();
  const { emulator, verifyBaseUrl } = await verificationService(config);
  const demo = createDemoApp({ ...config, verifyBaseUrl, logger });
  const server = createServer(demo.app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const worker = config.sweepWorker
    ? demo.kit.startSweepWorker({
        intervalMs: config.sweepIntervalMs,
        // Per-check warnings and errors; a line per run only when the run did something (onReport).
        logger: { ...logger, info: () => {} },
        onReport: (report) => {
          if (report.claimed + report.expired > 0) logger.info({ sweep: report }, 'sweep run');
        },
      })
    : undefined;
  // Listen for signals before the banner: whoever waits for it may signal at once.
  stopOnSignals(async () => {
    await worker?.stop();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await demo.close();
    await emulator?.close();
  });
  printBanner(config, port, emulator, worker !== undefined);
  logger.info(describeConfig(config), 'demo started');
}

/** The configured service, or else the bundled emulator, started here. */
async function verificationService(
  config: DemoConfig,
): Promise<{ emulator: RunningEmulator | undefined; verifyBaseUrl: string }> {
  if (config.verifyBaseUrl !== undefined) return { emulator: undefined, verifyBaseUrl: config.verifyBaseUrl };
  const emulator = await startBundledEmulator(config);
  return { emulator, verifyBaseUrl: emulator.url };
}

async function startBundledEmulator(config: DemoConfig): Promise<RunningEmulator> {
  // The browser really lands on VERIFY_RETURN_URL: it must point at this demo.
  checkReturnUrlServesDemo(config, config.port);
  return startEmulator({
    port: config.emulatorPort,
    host: '127.0.0.1',
    pageHost: config.emulatorPageHost, // verify.localhost: another site than the demo, and passkeys work
    // The emulator registers exactly the return URL the demo sends, so the two always agree.
    clients: [{ clientId: config.clientId, secret: config.clientSecret, returnUrl: config.returnUrl, platform: 'web' }],
    control: true,
    // The emulator's line for each text names its number masked, as every other line here does.
    log: (text) => console.log(`[emulator] ${text}`),
  });
}

function printBanner(config: DemoConfig, port: number, emulator: RunningEmulator | undefined, sweeping: boolean): void {
  // This instance's own address, and the one users open (the return URL's origin: the start's
  // Origin check refuses any other), which differ when several instances sit behind one address.
  const ownUrl = `http://${config.host}:${port}`;
  const publicUrl = new URL(config.returnUrl).origin;
  const databaseShown = config.databaseUrl === undefined ? config.databasePath : withoutPassword(config.databaseUrl);
  // Masked as on every page: a full number appears only in the form it is typed into (and never in a log).
  const users = SEEDED_USERS.map((u) => `${u.name.split(' ')[0]} (${maskDestination(u.phone)})`).join(', ');
  console.log(
    [
      '',
      `  Demo app        ${publicUrl}   (the return URL's origin: open the demo there)`,
      `  This instance   ${ownUrl}`,
      `  Sign in         open the demo and pick a demo user: ${users}`,
      emulator === undefined
        ? `  SMS codes       sent by ${config.verifyBaseUrl} to the user's phone`
        : `  SMS codes       ${emulator.url}/_dev/inbox   (the bundled emulator; codes are also printed below)`,
      sweeping
        ? `  Sweep worker    every ${Math.round(config.sweepIntervalMs / 1000)} s, in this process`
        : '  Sweep worker    off in this instance (SWEEP_WORKER=off): another instance or the sweep job sweeps',
      `  Database        ${databaseShown}`,
      '',
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

/** SIGINT/SIGTERM run `stop` (the worker first, then the servers and the database); a second signal exits at once. */
function stopOnSignals(stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      console.log(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping: sweep worker, then servers');
    await stop();
    logger.info({}, 'stopped');
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      shutdown(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
    });
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
  } else {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  }
  process.exit(1);
});
