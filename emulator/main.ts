/** `npm run emulator`: starts the emulator from the environment and says how to use it. */
import { DEFAULT_PAGE_HOST, loadEnvConfig } from './config.ts';
import { startEmulator } from './index.ts';

async function main(): Promise<void> {
  const config = loadEnvConfig();
  // The hosted page on its own *.localhost name: passkeys need a host name, not an IP (see README.md).
  const emulator = await startEmulator({ ...config, pageHost: config.pageHost ?? DEFAULT_PAGE_HOST });
  const secretSource = process.env.EMULATOR_CLIENTS
    ? 'as set in EMULATOR_CLIENTS'
    : '= VERIFY_CLIENT_SECRET of .env.example';
  const lines = [
    `Hosted SMS verification emulator listening on ${emulator.url}`,
    `  POST ${emulator.url}/session · GET ${emulator.url}/session/{id} · verifyUrl ${emulator.pageOrigin}/verify`,
    // The client secret is never printed, not even the dev one: say where it is configured instead.
    ...config.clients.map(
      (client) =>
        `  client ${client.clientId} · secret ${secretSource} · returnUrl ${client.returnUrl} (${client.platform ?? 'web'})`,
    ),
    config.control
      ? `  SMS inbox: ${emulator.url}/_dev/inbox\n  Control API: on at ${emulator.url}/_control (loopback only)`
      : '  Control API and inbox: off (EMULATOR_CONTROL=off, production-like); SMS codes are printed here only.',
    '  Press Ctrl+C to stop.',
  ];
  console.log(lines.join('\n'));

  const stop = (signal: string) => {
    console.log(`\n${signal}: stopping the emulator.`);
    emulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(`Emulator failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
