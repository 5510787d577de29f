/** The emulator in its own process (control API on, SMS log discarded, no artificial latency). */
import { startEmulator, type EmulatorClient } from '../../emulator/index.ts';
import { serve } from '../ipc.ts';

let running: { url: string; close(): Promise<void> } | undefined;

serve(
  {
    async start(args: { clients: EmulatorClient[] }) {
      running = await startEmulator({
        port: 0,
        host: '127.0.0.1',
        clients: args.clients,
        control: true,
        log: () => {},
      });
      return { url: running.url };
    },
    cpu: () => process.cpuUsage(),
  },
  async () => {
    await running?.close();
  },
);
