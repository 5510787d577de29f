// node dist/src/server.js: the app on PORT (default 3000) with DATABASE_URL, and the sweep in this
// process (every instance may run one: claims are leased, so they never read the same attempt at once).
import pg from 'pg';
import { createApp } from './app.js';

// A request waits at most 5 s for a free connection (pg's default is for ever).
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5_000 });
// A restart or failover ends idle connections with an 'error' event: without a listener node ends the process.
pool.on('error', (err) => console.error('idle PostgreSQL connection lost:', err.message));
const { app, kit, close } = await createApp({ pool });
const sweep = kit.startSweepWorker({ intervalMs: 60_000 });
const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`Listening on port ${process.env.PORT ?? 3000}`);
});
process.once('SIGTERM', async () => {
  await sweep.stop();
  server.close(async () => {
    await close();
    await pool.end();
  });
});
